// JSON extraction with json_schema: the generated text is constrained to the schema, so it
// always parses; the example checks that it does.
//
//   build/examples/json_extraction [--remote URL]
#include <nlohmann/json.hpp>

#include "example_main.h"

namespace radixlm::frontend {
namespace {

constexpr const char* kSchema = R"({
  "type": "object",
  "properties": {
    "name": {"type": "string", "maxLength": 40},
    "age": {"type": "integer"},
    "city": {"type": "string", "maxLength": 40}
  },
  "required": ["name", "age", "city"],
  "additionalProperties": false
})";

void Extract(State& s, const std::string& passage) {
  s += user("Extract the person's name, age and city as JSON.\n\n" + passage);
  s += assistant(gen("json", {.max_tokens = 96, .json_schema = kSchema}));
}

Status Body(examples::ExampleContext& ctx) {
  const std::vector<std::string> passages = {
      "Maria Lopez, 34, moved to Valencia last spring to open a bakery.",
      "At 71, retired teacher John Okafor still walks every morning through Leeds.",
      "The new intern, Wei Chen, is 22 and lives in Toronto.",
  };
  BatchResult batch = RunBatch(*ctx.backend, ctx.run, Extract, passages);
  for (size_t i = 0; i < passages.size(); ++i) {
    ProgramResult& r = batch.results[i];
    if (r.status.ok()) {
      const auto parsed = nlohmann::json::parse(r.variables["json"], nullptr, false);
      if (parsed.is_discarded() || !parsed.is_object()) {
        r.status = Internal("the constrained output is not a JSON object: " + r.variables["json"]);
      }
    }
    ctx.Report("passage " + std::to_string(i + 1), r);
  }
  return Status::Ok();
}

}  // namespace
}  // namespace radixlm::frontend

int main(int argc, char** argv) {
  return radixlm::examples::RunExample(argc, argv, "json_extraction", radixlm::frontend::Body);
}
