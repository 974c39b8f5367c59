#include "frontend/gen_options.h"

#include <nlohmann/json.hpp>
#include <sstream>

namespace radixlm::frontend {
namespace {

template <typename T>
void Override(std::optional<T>& base, const std::optional<T>& over) {
  if (over.has_value()) base = over;
}

template <typename T>
void Override(std::vector<T>& base, const std::vector<T>& over) {
  if (!over.empty()) base = over;
}

template <typename K, typename V>
void Override(std::map<K, V>& base, const std::map<K, V>& over) {
  if (!over.empty()) base = over;
}

}  // namespace

GenOptions MergeGenOptions(const GenOptions& base, const GenOptions& over) {
  GenOptions m = base;
  Override(m.max_tokens, over.max_tokens);
  Override(m.min_tokens, over.min_tokens);
  Override(m.stop, over.stop);
  Override(m.stop_token_ids, over.stop_token_ids);
  Override(m.temperature, over.temperature);
  Override(m.top_p, over.top_p);
  Override(m.top_k, over.top_k);
  Override(m.min_p, over.min_p);
  Override(m.frequency_penalty, over.frequency_penalty);
  Override(m.presence_penalty, over.presence_penalty);
  Override(m.repetition_penalty, over.repetition_penalty);
  Override(m.logit_bias, over.logit_bias);
  Override(m.ignore_eos, over.ignore_eos);
  Override(m.seed, over.seed);
  Override(m.skip_special_tokens, over.skip_special_tokens);
  Override(m.no_stop_trim, over.no_stop_trim);
  // A constraint replaces any constraint of the base (at most one may be set).
  if (over.regex || over.json_schema || over.ebnf) {
    m.regex = over.regex;
    m.json_schema = over.json_schema;
    m.ebnf = over.ebnf;
  }
  return m;
}

SamplingParams ToSamplingParams(const GenOptions& o) {
  SamplingParams p;
  if (o.max_tokens) p.max_new_tokens = *o.max_tokens;
  if (o.min_tokens) p.min_new_tokens = *o.min_tokens;
  p.stop = o.stop;
  p.stop_token_ids = o.stop_token_ids;
  if (o.temperature) p.temperature = *o.temperature;
  if (o.top_p) p.top_p = *o.top_p;
  if (o.top_k) p.top_k = *o.top_k;
  if (o.min_p) p.min_p = *o.min_p;
  if (o.frequency_penalty) p.frequency_penalty = *o.frequency_penalty;
  if (o.presence_penalty) p.presence_penalty = *o.presence_penalty;
  if (o.repetition_penalty) p.repetition_penalty = *o.repetition_penalty;
  p.logit_bias = o.logit_bias;
  if (o.ignore_eos) p.ignore_eos = *o.ignore_eos;
  if (o.seed) p.sampling_seed = *o.seed;
  if (o.skip_special_tokens) p.skip_special_tokens = *o.skip_special_tokens;
  if (o.no_stop_trim) p.no_stop_trim = *o.no_stop_trim;
  p.regex = o.regex;
  p.json_schema = o.json_schema;
  p.ebnf = o.ebnf;
  return p;
}

std::string DescribeGenOptions(const GenOptions& o) {
  std::ostringstream out;
  const char* sep = "";
  auto field = [&](const char* name, const auto& value) {
    out << sep << name << "=" << value;
    sep = ", ";
  };
  auto quoted = [](const std::string& s) { return nlohmann::json(s).dump(); };
  if (o.max_tokens) field("max_tokens", *o.max_tokens);
  if (o.min_tokens) field("min_tokens", *o.min_tokens);
  if (!o.stop.empty()) field("stop", nlohmann::json(o.stop).dump());
  if (!o.stop_token_ids.empty()) field("stop_token_ids", nlohmann::json(o.stop_token_ids).dump());
  if (o.temperature) field("temperature", *o.temperature);
  if (o.top_p) field("top_p", *o.top_p);
  if (o.top_k) field("top_k", *o.top_k);
  if (o.min_p) field("min_p", *o.min_p);
  if (o.frequency_penalty) field("frequency_penalty", *o.frequency_penalty);
  if (o.presence_penalty) field("presence_penalty", *o.presence_penalty);
  if (o.repetition_penalty) field("repetition_penalty", *o.repetition_penalty);
  if (!o.logit_bias.empty()) field("logit_bias", o.logit_bias.size());
  if (o.ignore_eos) field("ignore_eos", *o.ignore_eos ? "true" : "false");
  if (o.seed) field("seed", *o.seed);
  if (o.regex) field("regex", quoted(*o.regex));
  if (o.json_schema) field("json_schema", quoted(*o.json_schema));
  if (o.ebnf) field("ebnf", quoted(*o.ebnf));
  return out.str();
}

}  // namespace radixlm::frontend
