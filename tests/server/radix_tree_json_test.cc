// The /radix_tree query parameter and the JSON shape of a snapshot.
#include "server/radix_tree_json.h"

#include <gtest/gtest.h>

#include "scheduler/prompt_image.h"
#include "testing/fake_token_text.h"

namespace radixlm::server {
namespace {

TEST(RadixTreeJsonTest, MaxNodesParameter) {
  int32_t n = 0;
  ApiError error;
  EXPECT_TRUE(ParseMaxNodes("", &n, &error));
  EXPECT_EQ(n, kDefaultTreeNodes);
  EXPECT_TRUE(ParseMaxNodes("max_nodes=7", &n, &error));
  EXPECT_EQ(n, 7);
  EXPECT_TRUE(ParseMaxNodes("x=1&max_nodes=20000&y", &n, &error));
  EXPECT_EQ(n, 20000);
  for (const char* bad : {"max_nodes=0", "max_nodes=-3", "max_nodes=abc", "max_nodes=20001",
                          "max_nodes=", "max_nodes=5x", "max_nodes=99999999999999999999"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(ParseMaxNodes(bad, &n, &error));
    EXPECT_EQ(error.http_status, 400);
    EXPECT_NE(error.message.find("max_nodes"), std::string::npos);
  }
}

// An image's ids (scheduler/prompt_image.h) are no tokens: the text shows one <image> per span.
TEST(RadixTreeJsonTest, ImageSpansShowAsImage) {
  RadixTreeSnapshot snap;
  RadixTreeEntry root;
  RadixTreeEntry node;
  node.id = 1;
  node.parent = 0;
  std::vector<int32_t> image(3);
  WriteImageIds(ImageHash{1, 2}, image);
  node.snippet_ids = {3 + ('h' - 'a')};
  node.snippet_ids.insert(node.snippet_ids.end(), image.begin(), image.end());
  node.snippet_ids.push_back(3 + ('i' - 'a'));
  node.tokens = static_cast<int64_t>(node.snippet_ids.size());
  snap.entries = {root, node};
  const nlohmann::json j = RadixTreeJson(snap, FakeTokenTextCodec());
  EXPECT_EQ(j["nodes"][1]["text"], "h<image>i");
}

TEST(RadixTreeJsonTest, SnapshotShape) {
  RadixTreeSnapshot snap;
  snap.version = 9;
  snap.pool_size = 100;
  snap.pool_free = 60;
  snap.cache_hit_tokens = 30;
  snap.prefill_tokens = 90;
  snap.total_tokens = 12;
  RadixTreeEntry root;
  root.subtree_tokens = 12;
  RadixTreeEntry node;
  node.id = 4;
  node.parent = 0;
  node.tokens = 12;
  node.hit_count = 2;
  node.snippet_ids = {3 + ('h' - 'a'), 3 + ('i' - 'a')};  // the fake codec's 'h' 'i'
  RadixTreeEntry others;
  others.kind = RadixTreeEntry::Kind::kOthers;
  others.parent = 0;
  others.merged_subtrees = 3;
  snap.entries = {root, node, others};
  RadixTreeEvictionEntry ev;
  ev.seq = 1;
  ev.node_id = 2;
  ev.tokens = 5;
  snap.evictions.push_back(ev);
  const nlohmann::json j = RadixTreeJson(snap, FakeTokenTextCodec());
  EXPECT_EQ(j["version"], 9);
  EXPECT_EQ(j["pool"]["used"], 40);
  EXPECT_DOUBLE_EQ(j["cache_hit_rate"].get<double>(), 0.25);
  ASSERT_EQ(j["nodes"].size(), 3u);
  EXPECT_EQ(j["nodes"][0]["parent"], -1);
  EXPECT_EQ(j["nodes"][1]["id"], 4);
  EXPECT_EQ(j["nodes"][1]["hit_count"], 2);
  EXPECT_EQ(j["nodes"][1]["text"], "hi");
  EXPECT_EQ(j["nodes"][2]["kind"], "others");
  EXPECT_TRUE(j["nodes"][2]["id"].is_null());
  EXPECT_EQ(j["nodes"][2]["merged_subtrees"], 3);
  EXPECT_EQ(j["evictions"][0]["tokens"], 5);
  EXPECT_FALSE(RadixTreeCountersJson(snap).contains("nodes"));
}

// A LoRA adapter's namespace is labelled by the adapter's name; the base model's by null.
TEST(RadixTreeJsonTest, NamespacesNameTheirAdapters) {
  RadixTreeSnapshot snap;
  RadixTreeEntry root;
  RadixTreeEntry base;
  base.id = 1;
  base.parent = 0;
  base.tokens = 4;
  RadixTreeEntry tutor = base;
  tutor.id = 2;
  tutor.lora_namespace = 3;
  tutor.lora_adapter = "tutor";
  RadixTreeEntry below = tutor;  // a node under the adapter's top one
  below.id = 5;
  below.parent = 2;
  RadixTreeEntry gone = base;
  gone.id = 6;
  gone.lora_namespace = 1;
  gone.lora_adapter = "poet (unloaded)";
  snap.entries = {root, base, tutor, below, gone};
  const nlohmann::json j = RadixTreeJson(snap, FakeTokenTextCodec());
  ASSERT_EQ(j["nodes"].size(), 5u);
  EXPECT_EQ(j["nodes"][1]["lora_namespace"], 0);
  EXPECT_TRUE(j["nodes"][1]["lora_adapter"].is_null());
  EXPECT_EQ(j["nodes"][2]["lora_namespace"], 3);
  EXPECT_EQ(j["nodes"][2]["lora_adapter"], "tutor");
  EXPECT_EQ(j["nodes"][3]["lora_adapter"], "tutor");
  EXPECT_EQ(j["nodes"][4]["lora_namespace"], 1);
  EXPECT_EQ(j["nodes"][4]["lora_adapter"], "poet (unloaded)");
}

}  // namespace
}  // namespace radixlm::server
