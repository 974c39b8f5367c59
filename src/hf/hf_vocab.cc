#include "hf/hf_vocab.h"

#include <map>
#include <string_view>

#include "tokenizer/normal_form.h"

namespace radixlm::hf {

bool LooksSpecial(const std::string& t) {
  auto wraps = [&t](std::string_view open, std::string_view close) {
    return t.size() >= open.size() + close.size() && t.compare(0, open.size(), open) == 0 &&
           t.compare(t.size() - close.size(), close.size(), close) == 0;
  };
  return t == "<pad>" || t == "<mask>" || t == "<2mass>" || t == "[@BOS@]" || wraps("<|", "|>") ||
         wraps("<\xef\xbd\x9c", "\xef\xbd\x9c>") || wraps("<unused", ">");
}

bool IsByteToken(const std::string& t) {
  auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F'); };
  return t.size() == 6 && t.compare(0, 3, "<0x") == 0 && hex(t[3]) && hex(t[4]) && t[5] == '>';
}

std::string Describe(const nlohmann::json& j) {
  std::string s = j.dump();
  return s.size() > 200 ? s.substr(0, 200) + "..." : s;
}

std::string NormalFormStep(const nlohmann::json& j) {
  const std::string type = j.is_object() ? j.value("type", "") : "";
  return tokenizer::NormalFormFromName(type).has_value() ? type : "";
}

std::vector<nlohmann::json> NormalizerMembers(const nlohmann::json& j) {
  if (j.is_null()) return {};
  if (j.is_object() && j.value("type", "") == "Sequence" && j.contains("normalizers") &&
      j["normalizers"].is_array()) {
    return j["normalizers"].get<std::vector<nlohmann::json>>();
  }
  return {j};
}

StatusOr<TokenTable> ReadTokenTable(const nlohmann::json& tok, int64_t vocab_size,
                                    const std::string& path) {
  const nlohmann::json& model = tok["model"];
  if (!model.contains("vocab") || !model["vocab"].is_object()) {
    return InvalidArgument(path + ": model.vocab is not an object");
  }
  std::map<int64_t, std::string> by_id;
  std::map<int64_t, bool> special;  // added tokens: their "special" flag
  for (auto it = model["vocab"].begin(); it != model["vocab"].end(); ++it) {
    if (!it.value().is_number_integer() || it.value().get<int64_t>() < 0) {
      return InvalidArgument(path + ": vocab entry '" + it.key() + "' has no valid id");
    }
    by_id[it.value().get<int64_t>()] = it.key();
  }
  if (tok.contains("added_tokens") && tok["added_tokens"].is_array()) {
    for (const nlohmann::json& a : tok["added_tokens"]) {
      if (!a.is_object() || !a.contains("id") || !a["id"].is_number_integer() ||
          !a.contains("content") || !a["content"].is_string() || a["id"].get<int64_t>() < 0) {
        return InvalidArgument(path + ": an added_tokens entry has no id or content");
      }
      const int64_t id = a["id"].get<int64_t>();
      by_id[id] = a["content"].get<std::string>();
      special[id] = a.value("special", false);
    }
  }
  TokenTable t;
  t.n_real = static_cast<int64_t>(by_id.size());
  const int64_t n = std::max<int64_t>(by_id.empty() ? 0 : by_id.rbegin()->first + 1, vocab_size);
  if (n > (int64_t{1} << 24)) return InvalidArgument(path + ": vocabulary too large");
  t.tokens.resize(static_cast<size_t>(n));
  t.types.assign(static_cast<size_t>(n), kNormal);
  t.added.assign(static_cast<size_t>(n), false);
  for (int64_t i = 0; i < n; ++i) {
    const auto it = by_id.find(i);
    if (it == by_id.end()) {
      t.tokens[i] = "[PAD" + std::to_string(i) + "]";
      t.types[i] = kUnused;
      continue;
    }
    t.tokens[i] = it->second;
    const auto s = special.find(i);
    if (s != special.end()) {
      t.added[i] = true;
      t.types[i] = s->second || LooksSpecial(it->second) ? kControl : kUserDefined;
    }
  }
  return t;
}

}  // namespace radixlm::hf
