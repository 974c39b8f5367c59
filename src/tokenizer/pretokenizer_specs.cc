// The pre-tokenizer regexes per tokenizer.ggml.pre value. The patterns are the ones llama.cpp
// (src/llama-vocab.cpp, llm_tokenizer_bpe) uses for the same names, so that token ids agree.
#include <initializer_list>

#include "tokenizer/pretokenizer.h"

namespace radixlm::tokenizer {
namespace {

// GPT-2's pattern; also the core of falcon, starcoder and the default set.
constexpr const char* kGpt2 =
    R"re('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))re";

// Llama-3's pattern with the case-insensitive contractions spelled out.
constexpr const char* kLlama3 =
    R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|)re"
    R"re(\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

// Qwen2: as Llama-3 but single digits.
constexpr const char* kQwen2 =
    R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|)re"
    R"re(\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

// Cased letters (Unicode Lu/Ll/Lt runs), spelled as code points so that no editor or tool
// can silently normalize them (several are canonical singletons, e.g. U+212A KELVIN SIGN).
constexpr const char* kDeepseekLetters =
    "\\s?[A-Za-z\\x{B5}\\x{C0}-\\x{D6}\\x{D8}-\\x{F6}\\x{F8}-\\x{1BA}\\x{1BC}-\\x{1BF}"
    "\\x{1C4}-\\x{293}\\x{295}-\\x{2AF}\\x{370}-\\x{373}\\x{376}\\x{377}\\x{37B}-\\x{37D}"
    "\\x{37F}\\x{386}\\x{388}-\\x{38A}\\x{38C}\\x{38E}-\\x{3A1}\\x{3A3}-\\x{3F5}\\x{3F7}-"
    "\\x{481}\\x{48A}-\\x{52F}\\x{531}-\\x{556}\\x{10A0}-\\x{10C5}\\x{13A0}-\\x{13F5}"
    "\\x{13F8}-\\x{13FD}\\x{1C90}-\\x{1CBA}\\x{1CBD}-\\x{1CBF}\\x{1D00}-\\x{1D2B}\\x{1D6B}-"
    "\\x{1D77}\\x{1D79}-\\x{1D9A}\\x{1E00}-\\x{1F15}\\x{1F18}-\\x{1F1D}\\x{1F20}-\\x{1F45}"
    "\\x{1F48}-\\x{1F4D}\\x{1F50}-\\x{1F57}\\x{1F59}\\x{1F5B}\\x{1F5D}\\x{1F5F}-\\x{1F7D}"
    "\\x{1F80}-\\x{1FB4}\\x{1FB6}-\\x{1FBC}\\x{1FBE}\\x{1FC2}-\\x{1FC4}\\x{1FC6}-\\x{1FCC}"
    "\\x{1FD0}-\\x{1FD3}\\x{1FD6}-\\x{1FDB}\\x{1FE0}-\\x{1FEC}\\x{1FF2}-\\x{1FF4}\\x{1FF6}-"
    "\\x{1FFC}\\x{2102}\\x{2107}\\x{210A}-\\x{2113}\\x{2115}\\x{2119}-\\x{211D}\\x{2124}"
    "\\x{2126}\\x{2128}\\x{212A}-\\x{212D}\\x{212F}-\\x{2134}\\x{2139}\\x{213C}-\\x{213F}"
    "\\x{2145}-\\x{2149}\\x{214E}\\x{2183}\\x{2184}\\x{2C00}-\\x{2C7B}\\x{2C7E}-\\x{2CE4}"
    "\\x{2CEB}-\\x{2CEE}\\x{2CF2}\\x{2CF3}\\x{A640}-\\x{A66D}\\x{A680}-\\x{A69B}\\x{A722}-"
    "\\x{A76F}\\x{A771}-\\x{A787}\\x{A78B}-\\x{A78E}\\x{AB70}-\\x{ABBF}\\x{FB00}-\\x{FB06}"
    "\\x{FB13}-\\x{FB17}\\x{FF21}-\\x{FF3A}\\x{FF41}-\\x{FF5A}\\x{10400}-\\x{1044F}"
    "\\x{104B0}-\\x{104D3}\\x{104D8}-\\x{104FB}\\x{10C80}-\\x{10CB2}\\x{10CC0}-\\x{10CF2}"
    "\\x{118A0}-\\x{118DF}\\x{1E900}-\\x{1E943}]+";
// CJK ideographs, U+0800..U+4E00, Hangul.
constexpr const char* kDeepseekCjk = "[\\x{4E00}-\\x{9FA5}\\x{800}-\\x{4E00}\\x{AC00}-\\x{D7FF}]+";
// ASCII and full-width punctuation, curly quotes, ideographic space / comma / full stop.
constexpr const char* kDeepseekPunct =
    "\\s?[!-/:-~\\x{FF01}-\\x{FF0F}\\x{FF1A}-\\x{FF5E}\\x{2018}-\\x{201F}\\x{3000}-\\x{3002}]+";

// Poro / Bloom / GPT3-Finnish: everything up to white space or a sentence mark.
constexpr const char* kPoro =
    " ?[^(\\s|.,!?\\x{2026}\\x{3002}\\x{FF0C}\\x{3001}\\x{964}\\x{6D4}\\x{60C})]+";

// Tekken (Mistral Nemo): camel-case aware words.
constexpr const char* kTekken =
    R"re([^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+|)re"
    R"re([^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*|)re"
    R"re(\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

// GPT-4o / Llama-4: camel-case aware words with contractions, numbers in threes.
constexpr const char* kGpt4o =
    R"re([^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+)re"
    R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|)re"
    R"re([^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*)re"
    R"re((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|)re"
    R"re(\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

constexpr const char* kDeepseekV3Words =
    R"re([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+|)re"
    R"re( ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

bool NameIn(std::string_view name, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names) {
    if (name == n) return true;
  }
  return false;
}

}  // namespace

StatusOr<PreTokenizerSpec> FindPreTokenizerSpec(std::string_view pre) {
  PreTokenizerSpec s;
  if (NameIn(pre, {"", "default"})) {
    s.family = "default";
    s.regexes = {R"re([\p{P}\$\+<=>\^~\|]+)re", kGpt2, R"re(\p{N}+)re", "[0-9][0-9][0-9]"};
  } else if (NameIn(pre, {"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral",
                          "midm-2.0", "lfm2"})) {
    s.family = "llama3";
    s.regexes = {kLlama3};
    s.ignore_merges = true;
    s.default_add_bos = true;
  } else if (NameIn(pre, {"dbrx", "smaug-bpe"})) {
    s.family = "dbrx";
    s.regexes = {kLlama3};
  } else if (NameIn(pre, {"glm4", "chatglm-bpe"})) {
    s.family = "chatglm4";
    s.regexes = {kLlama3};
    s.clear_bos = true;
  } else if (pre == "deepseek-llm") {
    s.family = "deepseek-llm";
    s.regexes = {"[\r\n]", kDeepseekLetters, kDeepseekPunct, "\\s+$", kDeepseekCjk, "\\p{N}+"};
  } else if (pre == "deepseek-coder") {
    s.family = "deepseek-coder";
    s.regexes = {"[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", kDeepseekCjk, "\\p{N}"};
  } else if (pre == "deepseek-v3") {
    s.family = "deepseek-v3";
    // Digits in threes, CJK ideographs / hiragana / katakana, then words.
    s.regexes = {"\\p{N}{1,3}", "[\\x{4E00}-\\x{9FA5}\\x{3040}-\\x{309F}\\x{30A0}-\\x{30FF}]+",
                 kDeepseekV3Words};
  } else if (pre == "falcon") {
    s.family = "falcon";
    s.regexes = {R"re([\p{P}\$\+<=>\^~\|`]+)re", kGpt2, "[0-9][0-9][0-9]"};
  } else if (NameIn(pre, {"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone",
                          "minerva-7b"})) {
    s.family = "starcoder";
    s.regexes = {"\\p{N}", kGpt2};
  } else if (NameIn(pre, {"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es",
                          "jina-v2-de", "a.x-4.0", "mellum", "modern-bert", "exaone4", "mpt",
                          "olmo", "jais", "trillion"})) {
    s.family = "gpt2";
    s.regexes = {kGpt2};
  } else if (NameIn(pre,
                    {"qwen2", "deepseek-r1-qwen", "kormo", "megrez", "stablelm2", "hunyuan"})) {
    s.family = "qwen2";
    s.regexes = {kQwen2};
  } else if (NameIn(pre, {"poro-chat", "bloom", "gpt3-finnish"})) {
    s.family = "poro";
    s.regexes = {kPoro};
  } else if (pre == "viking") {
    s.family = "viking";
    s.regexes = {kPoro, "\\p{N}"};
  } else if (pre == "tekken") {
    s.family = "tekken";
    s.regexes = {kTekken};
    s.ignore_merges = true;
    s.default_add_bos = true;
  } else if (NameIn(pre, {"gpt-4o", "llama4", "kanana2"})) {
    s.family = "gpt-4o";
    s.regexes = {kGpt4o};
  } else if (NameIn(pre, {"gemma4", "granite-embed-multi-311m"})) {
    // No word splitting: BPE runs over each line and each run of newlines.
    s.family = "gemma4";
    s.regexes = {"[^\\n]+|[\\n]+"};
    s.spm_style = true;
    s.force_add_bos = true;
  } else {
    return InvalidArgument("unknown pre-tokenizer type: '" + std::string(pre) + "'");
  }
  return s;
}

}  // namespace radixlm::tokenizer
