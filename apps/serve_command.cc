// `radixlm serve`: loads a model into an Engine and serves it over HTTP — SGLang's native API
// (/generate, /get_model_info, ...), OpenAI's (/v1/completions, /v1/chat/completions,
// /v1/models) and Prometheus /metrics. Flags use SGLang's launch_server names.
//
//   radixlm serve --model-path default --port 30000
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "apps/commands.h"
#include "disagg/disagg_support.h"
#ifdef RADIXLM_HAVE_UCX
#include "disagg/pd_transfer.h"
#endif
#include "engine/engine.h"
#include "hf/model_file.h"
#include "server/http_server.h"
#include "server/listen_socket.h"
#include "server/server_log.h"
#include "util/model_path.h"
#include "util/mutex.h"

namespace radixlm::apps {
namespace {

struct ServeOptions {
  EngineConfig engine;
  server::ServerConfig server;
  double mem_fraction_static = 0;  // > 0: KV pool = fraction of RAM minus the weights
  // SGLang's prefill/decode disaggregation flags (docs/disaggregation.md).
  std::string disaggregation_mode = "null";
  std::string disaggregation_bootstrap_port;    // "": SGLang's default, 8998
  std::string disaggregation_transfer_backend;  // "": ucx
  double disaggregation_timeout_s = 60;         // a decode request waits this long for its KV
  bool num_draft_tokens_given = false;  // --speculative-num-draft-tokens on the command line
};

// As SGLang: a STANDALONE or NEXTN chain (--speculative-eagle-topk 1) drafts num_steps tokens
// after its root, so its draft size is num_steps + 1 whatever --speculative-num-draft-tokens
// says; an explicit other value is adjusted with a warning.
void AlignChainDraftTokens(ServeOptions* opt) {
  EngineConfig& e = opt->engine;
  if ((e.speculative_algorithm != "STANDALONE" && e.speculative_algorithm != "NEXTN") ||
      e.speculative_eagle_topk != 1) {
    return;
  }
  const int chain = e.speculative_num_steps + 1;
  if (opt->num_draft_tokens_given && e.speculative_num_draft_tokens != chain) {
    std::fprintf(stderr,
                 "radixlm serve: warning: --speculative-num-draft-tokens %d is adjusted to "
                 "--speculative-num-steps + 1 = %d with --speculative-eagle-topk 1\n",
                 e.speculative_num_draft_tokens, chain);
  }
  e.speculative_num_draft_tokens = chain;
}

Status CheckDisaggregation(const ServeOptions& opt) {
  if (opt.disaggregation_mode == "null") {
    for (const auto& [flag, value] :
         {std::pair{"--disaggregation-bootstrap-port", &opt.disaggregation_bootstrap_port},
          std::pair{"--disaggregation-transfer-backend", &opt.disaggregation_transfer_backend}}) {
      if (!value->empty()) {
        return InvalidArgument(std::string(flag) +
                               " applies to prefill/decode disaggregation: add "
                               "--disaggregation-mode prefill or decode");
      }
    }
    return Status::Ok();
  }
  RADIXLM_RETURN_IF_ERROR(disagg::CheckTransferBackend(
      opt.disaggregation_transfer_backend.empty() ? "ucx" : opt.disaggregation_transfer_backend));
  if (opt.engine.disable_radix_cache) {
    return InvalidArgument("--disaggregation-mode " + opt.disaggregation_mode +
                           " needs the radix cache (the transferred KV is a cached prefix): "
                           "drop --disable-radix-cache");
  }
  // Combinations not built: refused at start-up, never half-served (docs/disaggregation.md).
  if (opt.engine.enable_hierarchical_cache) {
    return Unimplemented("--disaggregation-mode " + opt.disaggregation_mode +
                         " with --enable-hierarchical-cache is not built in radixlm: the KV "
                         "transfer and the disk KV tier do not work together yet; drop one of "
                         "the two");
  }
  if (!opt.engine.speculative_algorithm.empty()) {
    return Unimplemented("--disaggregation-mode " + opt.disaggregation_mode +
                         " with --speculative-algorithm " + opt.engine.speculative_algorithm +
                         " is not built in radixlm: the KV transfer carries the target model's "
                         "prompt KV only, no draft state; drop one of the two");
  }
  if (!opt.disaggregation_bootstrap_port.empty()) {
    const std::string& port = opt.disaggregation_bootstrap_port;
    if (port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5 ||
        std::stoi(port) < 1 || std::stoi(port) > 65535) {
      return InvalidArgument("--disaggregation-bootstrap-port must be a port number, got " + port);
    }
  }
  // Also refuses NaN (every comparison false) and values whose milliseconds overflow.
  if (!(opt.disaggregation_timeout_s > 0 && opt.disaggregation_timeout_s <= 1e9)) {
    return InvalidArgument("--disaggregation-timeout must be > 0 and at most 1e9 seconds");
  }
  return Status::Ok();
}

// The KV transfer ends of a prefill or decode server; both outlive the engine and the server.
struct DisaggregationEnds {
#ifdef RADIXLM_HAVE_UCX
  std::unique_ptr<disagg::PrefillKvExporter> exporter;
  std::unique_ptr<disagg::DecodeKvImporter> importer;
#endif
  std::string summary;  // for the start-up banner; "" in null mode
};

// Prefill: listens on the bootstrap port and becomes the engine's export sink. Decode: the
// server's fetch_prefix_kv.
Status StartDisaggregation(const ServeOptions& opt, Engine* engine, server::ServerConfig* server,
                           DisaggregationEnds* ends) {
  server->disaggregation_mode = opt.disaggregation_mode;
  if (opt.disaggregation_mode == "null") return Status::Ok();
#ifdef RADIXLM_HAVE_UCX
  if (opt.disaggregation_mode == "prefill") {
    constexpr int kDefaultBootstrapPort = 8998;  // SGLang's
    const int port = opt.disaggregation_bootstrap_port.empty()
                         ? kDefaultBootstrapPort
                         : std::stoi(opt.disaggregation_bootstrap_port);
    const std::string host = server->host == "localhost" ? "127.0.0.1" : server->host;
    RADIXLM_ASSIGN_OR_RETURN(ends->exporter, disagg::PrefillKvExporter::Listen(host, port));
    disagg::PrefillKvExporter* exporter = ends->exporter.get();
    engine->SetKvExportSink([exporter](uint64_t room, StatusOr<PrefixKv> kv) {
      exporter->Export(room, std::move(kv));
    });
    server->kv_transfer_totals = [exporter] {
      const disagg::KvSender::Counters c = exporter->counters();
      return server::KvTransferTotals{
          .transfers = c.sent, .bytes = c.bytes_sent, .seconds = c.send_seconds};
    };
    ends->summary = "prefill, KV over UCX from " + host + ":" + std::to_string(exporter->port()) +
                    " (the gateway's bootstrap port)";
    return Status::Ok();
  }
  const auto timeout =
      std::chrono::milliseconds(static_cast<int64_t>(opt.disaggregation_timeout_s * 1000));
  // A record longer than this server's own context length of KV is refused unread.
  const uint64_t max_record_bytes = disagg::MaxKvRecordBytes(
      engine->context_length(), engine->kv_token_bytes(), engine->state_slot_bytes());
  RADIXLM_ASSIGN_OR_RETURN(ends->importer,
                           disagg::DecodeKvImporter::Create(timeout, max_record_bytes));
  disagg::DecodeKvImporter* importer = ends->importer.get();
  server->fetch_prefix_kv = [importer](const std::string& host, int port, uint64_t room) {
    return importer->Fetch(host, port, room);
  };
  server->kv_transfer_totals = [importer] {
    const disagg::KvReceiver::Counters c = importer->counters();
    return server::KvTransferTotals{
        .transfers = c.received, .bytes = c.bytes_received, .seconds = c.receive_seconds};
  };
  ends->summary = "decode, KV over UCX from the prefill server named by each request";
  return Status::Ok();
#else
  (void)engine;
  (void)ends;
  return disagg::CheckTransferBackend("ucx");  // says UCX is not built
#endif
}

// Many concurrent streams need many descriptors: lift the soft limit to the hard one.
void RaiseFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

int64_t MemTotalBytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemTotal:") return kib * 1024;
  }
  return 0;
}

// A spinner with elapsed time on stderr while the model loads (only on a terminal). Log lines
// written meanwhile (the load's progress) go through Log(), which clears the spinner's line
// first so the two never share a line.
class LoadingIndicator {
 public:
  explicit LoadingIndicator(std::string what) : what_(std::move(what)) {
    if (!isatty(STDERR_FILENO)) {
      std::fprintf(stderr, "%s ...\n", what_.c_str());
      return;
    }
    thread_ = std::thread([this] {
      static const char* kFrames[] = {"|", "/", "-", "\\"};
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; !done_.load(); ++i) {
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        {
          MutexLock lock(&stderr_mu_);
          std::fprintf(stderr, "\r%s %s %.1fs", kFrames[i % 4], what_.c_str(), s);
          std::fflush(stderr);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      std::fprintf(stderr, "\r\033[K");
    });
  }
  ~LoadingIndicator() {
    done_.store(true);
    if (thread_.joinable()) thread_.join();
  }

  // An info-level log line (server_log.h), on a line of its own.
  void Log(const std::string& line) {
    MutexLock lock(&stderr_mu_);
    if (thread_.joinable()) std::fprintf(stderr, "\r\033[K");
    server::Log(server::LogLevel::kInfo, line);
  }

 private:
  const std::string what_;
  std::atomic<bool> done_{false};
  Mutex stderr_mu_;  // the spinner's writes and Log's
  std::thread thread_;
};

std::string FormatBytes(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

Status RunServe(ServeOptions opt) {
  server::LogLevel level;
  if (!server::ParseLogLevel(opt.server.log_level, &level)) {
    return InvalidArgument("--log-level must be debug, info, warning or error");
  }
  server::SetLogLevel(level);
  RADIXLM_RETURN_IF_ERROR(CheckDisaggregation(opt));
  AlignChainDraftTokens(&opt);
  RaiseFileLimit();
  // The port first: a port in use fails before the model loads, and the KV transfer's
  // transports (which bind ephemeral ports) cannot take it.
  RADIXLM_ASSIGN_OR_RETURN(server::ListenSocket listener,
                           server::ListenSocket::Open(opt.server.host, opt.server.port));
  RADIXLM_ASSIGN_OR_RETURN(std::string path, ResolveModelPath(opt.engine.model_path));
  const int64_t file_bytes = hf::ModelPathBytes(path);  // a folder: its safetensors' bytes
  if (opt.mem_fraction_static > 0) {
    if (opt.mem_fraction_static >= 1) return InvalidArgument("--mem-fraction-static must be < 1");
    const int64_t kv_bytes =
        static_cast<int64_t>(opt.mem_fraction_static * static_cast<double>(MemTotalBytes())) -
        file_bytes;
    if (kv_bytes < (int64_t{16} << 20)) {
      return InvalidArgument("--mem-fraction-static leaves no memory for the KV cache");
    }
    opt.engine.kv_cache_memory_mb = kv_bytes >> 20;
  }
  opt.engine.model_path = path;
  opt.engine.on_request_warning = [](const std::string& line) {
    server::Log(server::LogLevel::kWarning, line);
  };

  DisaggregationEnds disaggregation;  // outlives the engine (its export sink)
  std::unique_ptr<Engine> engine;
  {
    LoadingIndicator loading("loading " + std::filesystem::path(path).filename().string() + " (" +
                             FormatBytes(file_bytes) + ")");
    EngineConfig engine_config = opt.engine;
    engine_config.on_load_progress = [&loading](const std::string& line) { loading.Log(line); };
    RADIXLM_ASSIGN_OR_RETURN(engine, Engine::Create(engine_config));
  }
  const ModelInfo& info = engine->assets().info();
  opt.server.chat_sampling_defaults = info.sampling_defaults;
  const Status& chat_status = engine->assets().chat_status();

  RADIXLM_RETURN_IF_ERROR(StartDisaggregation(opt, engine.get(), &opt.server, &disaggregation));
  RADIXLM_ASSIGN_OR_RETURN(std::unique_ptr<server::HttpServer> http,
                           server::HttpServer::Create(opt.server, engine.get()));
  RADIXLM_RETURN_IF_ERROR(http->Start(std::move(listener)));

  const EngineSettings& sc = engine->settings();
  const int threads = opt.engine.threads > 0
                          ? opt.engine.threads
                          : static_cast<int>(std::thread::hardware_concurrency());
  const std::string swa_note = sc.swa_max_total_tokens > 0
                                   ? " + " + std::to_string(sc.swa_max_total_tokens) +
                                         " sliding-window tokens (window " +
                                         std::to_string(sc.sliding_window) + ")"
                                   : "";
  std::fprintf(stderr,
               "radixlm serve\n"
               "  model    %s (%s, %s)\n"
               "  arch     %s, context %lld tokens, vocab %d\n"
               "  threads  %d compute, %d http\n"
               "  KV pool  %lld tokens (page size %d)%s, radix cache %s (%s eviction)\n"
               "  policy   %s, chunked prefill %lld, max running %d, max prefill %lld\n"
               "  chat     %s\n"
               "  URL      %s%s\n"
               "%s",
               info.model_path.c_str(), info.name.c_str(), FormatBytes(info.file_bytes).c_str(),
               info.arch.c_str(), static_cast<long long>(engine->context_length()),
               engine->vocab_size(), threads, opt.server.io_threads,
               static_cast<long long>(engine->max_total_tokens()), sc.page_size, swa_note.c_str(),
               sc.disable_radix_cache ? "off" : "on", sc.radix_eviction_policy.c_str(),
               sc.schedule_policy.c_str(), static_cast<long long>(sc.chunked_prefill_size),
               sc.max_running_requests, static_cast<long long>(sc.max_prefill_tokens),
               chat_status.ok() ? "template loaded" : chat_status.message().c_str(),
               http->url().c_str(), opt.server.api_key.empty() ? "" : " (API key required)",
               disaggregation.summary.empty()
                   ? ""
                   : ("  PD       " + disaggregation.summary + "\n").c_str());
  if (opt.engine.is_embedding) {  // an embedding server refuses /generate
    std::fprintf(stderr,
                 "Ready. Try:\n  curl %s/v1/embeddings -H 'Content-Type: application/json' "
                 "-d '{\"input\": \"The capital of France is Paris.\"}'\n",
                 http->url().c_str());
  } else {
    std::fprintf(stderr,
                 "Ready. Try:\n  curl %s/generate -H 'Content-Type: application/json' "
                 "-d '{\"text\": \"The capital of France is\", \"sampling_params\": "
                 "{\"max_new_tokens\": 16, \"temperature\": 0}}'\n",
                 http->url().c_str());
  }
  std::fflush(stderr);

  http->WaitForShutdown();
  http.reset();
  engine.reset();
  return Status::Ok();
}

const bool kServeRegistered = RegisterCommand("serve", [](CLI::App& app) {
  auto opt = std::make_shared<ServeOptions>();
  CLI::App* cmd = app.add_subcommand("serve", "Serve a model over HTTP (SGLang + OpenAI APIs)");
  EngineConfig& e = opt->engine;
  server::ServerConfig& s = opt->server;
  e.model_path = "default";
  cmd->add_option("--model-path", e.model_path,
                  "GGUF model file, Hugging Face checkpoint folder, or 'default'");
  cmd->add_option("--host", s.host, "Address to listen on")->capture_default_str();
  cmd->add_option("--port", s.port, "Port (0: any free port)")->capture_default_str();
  cmd->add_option("--api-key", s.api_key, "Require 'Authorization: Bearer <key>'");
  cmd->add_option("--served-model-name", s.served_model_name,
                  "Model name reported by /v1/models and the info routes (default: the GGUF file "
                  "name without .gguf)");
  cmd->add_option("--threads", e.threads, "Compute threads (0: all cores)");
  cmd->add_option("--io-threads", s.io_threads, "HTTP threads")->capture_default_str();
  cmd->add_flag("--disable-web-ui", s.disable_web_ui,
                "Serve no web page at / (the /radix_tree routes stay)");
  cmd->add_option("--context-length", e.context_length, "Context length (default: the model's)");
  cmd->add_option("--quantization", e.quantization,
                  "Hugging Face folders: q8_0 | q4_k | q6_k quantizes the weights at load "
                  "(default: served in their stored F32 / F16 / BF16)");
  cmd->add_option("--linear-attn-prefill", e.linear_attn_prefill,
                  "Hybrid (linear-attention) models: recurrent (token by token; outputs "
                  "independent of how a prompt is chunked) | chunked (faster prefill; outputs "
                  "depend, within float rounding, on where the prompt's chunks start)")
      ->capture_default_str();
  cmd->add_flag("--is-embedding", e.is_embedding,
                "Serve an embedding model: /v1/embeddings and /encode, no generation");
  cmd->add_option("--pooling", e.pooling,
                  "With --is-embedding: last | mean | cls (default: the GGUF's pooling_type)");
  cmd->add_flag("--allow-auto-truncate", e.allow_auto_truncate,
                "A prompt or max_new_tokens past the context length (or the KV pool) is cut to "
                "fit, with a warning logged, instead of answered with 400: the prompt keeps its "
                "first tokens, max_new_tokens is lowered to what is left");
  cmd->add_option("--max-total-tokens", e.max_total_tokens, "KV pool size in tokens");
  cmd->add_option("--mem-fraction-static", opt->mem_fraction_static,
                  "Share of RAM for weights + KV pool (sizes the pool)");
  cmd->add_option("--kv-cache-memory-mb", e.kv_cache_memory_mb,
                  "KV pool memory when not sized "
                  "otherwise")
      ->capture_default_str();
  cmd->add_option("--page-size", e.page_size, "Tokens per KV page")->capture_default_str();
  cmd->add_option("--kv-cache-dtype", e.kv_cache_dtype,
                  "KV cache values: auto (F16), bf16, or fp8_e5m2 (one byte each: twice the "
                  "tokens in the same memory, lossy)")
      ->capture_default_str();
  cmd->add_flag("--disable-radix-cache", e.disable_radix_cache, "Do not reuse prefixes");
  cmd->add_option("--max-mamba-cache-size", e.max_mamba_cache_size,
                  "Hybrid (linear-attention) models: most snapshots of the linear layers' state "
                  "the radix cache keeps (default: what a quarter of the KV memory holds)");
  cmd->add_option("--hybrid-snapshot-interval", e.hybrid_snapshot_interval,
                  "Hybrid (linear-attention) models: snapshot the linear layers' state every "
                  "this many prefill tokens (prefill chunks end there; with the disk tier, a "
                  "multiple of its block size)")
      ->capture_default_str();
  cmd->add_option("--swa-full-tokens-ratio", e.swa_full_tokens_ratio,
                  "Sliding-window models: KV tokens of a windowed layer per token of a "
                  "full-attention layer, in (0, 1] (sizes the two KV pools)")
      ->capture_default_str();
  cmd->add_flag("--disable-hybrid-swa-memory", e.disable_hybrid_swa_memory,
                "Sliding-window models: keep every layer's KV for every token (one pool)");
  cmd->add_flag("--enable-hierarchical-cache", e.enable_hierarchical_cache,
                "Keep KV prefixes evicted from RAM in a disk tier and load them back "
                "(needs --hicache-storage-backend file and --hicache-storage-dir)");
  cmd->add_option("--hicache-storage-backend", e.hicache_storage_backend,
                  "Second KV tier: file (the only backend built)");
  cmd->add_option("--hicache-write-policy", e.hicache_write_policy,
                  "write_through: store prefixes when cached; write_back: when evicted")
      ->capture_default_str();
  cmd->add_option("--hicache-storage-dir", e.hicache_storage_dir,
                  "Directory of the disk KV tier's block files");
  cmd->add_option("--hicache-storage-size", e.hicache_storage_size_gb,
                  "Size cap of the disk KV tier in GB (oldest blocks deleted beyond it)")
      ->capture_default_str();
  cmd->add_flag("--disable-jump-forward", e.disable_jump_forward,
                "Constrained decoding: sample forced grammar text token by token instead of "
                "appending it without forward passes");
  cmd->add_option("--constrained-json-whitespace-pattern", e.constrained_json_whitespace_pattern,
                  "Regex for whitespace between JSON tokens in json_schema outputs (\"[ ]?\": "
                  "outlines' default, \"\": compact JSON; default: json.dumps's \", \" and "
                  "\": \" separators)");
  cmd->add_flag("--enable-lora", e.enable_lora,
                "Serve LoRA adapters over the base model (requests name one with lora_path, or "
                "\"model\": \"base:adapter\"; /load_lora_adapter and /unload_lora_adapter)");
  cmd->add_option("--lora-paths", e.lora_paths,
                  "Adapters (llama.cpp's GGUF LoRA files) loaded at start-up: name=path, path "
                  "(named by its path) or {\"lora_name\": ..., \"lora_path\": ...}; implies "
                  "--enable-lora");
  cmd->add_option("--max-lora-rank", e.max_lora_rank,
                  "Adapters of a larger rank are refused (default: any)");
  cmd->add_option("--max-loras-per-batch", e.max_loras_per_batch,
                  "Distinct adapters one forward pass serves at most")
      ->capture_default_str();
  cmd->add_option("--lora-target-modules", e.lora_target_modules,
                  "Matrices adapters may touch: q_proj k_proj v_proj o_proj gate_proj up_proj "
                  "down_proj, or all (default: all)");
  cmd->add_option("--mmproj", e.mmproj_path,
                  "Vision projector GGUF (llama.cpp's mmproj file for this model): the model "
                  "then takes images (chat image_url parts, /generate image_data)");
  cmd->add_option("--max-images-per-request", e.max_images_per_request,
                  "Requests with more images are refused (400)")
      ->capture_default_str();
  cmd->add_option("--image-cache-mb", e.image_cache_mb,
                  "Encoded images kept by content, so a repeated image is not encoded again")
      ->capture_default_str();
  cmd->add_option("--allowed-local-media-path", s.allowed_local_media_path,
                  "Images given as local paths or file:// URLs are read only under this folder "
                  "(default: none are read)");
  cmd->add_option("--speculative-algorithm", e.speculative_algorithm,
                  "NGRAM: draft from an n-gram trie of every request's tokens; STANDALONE: "
                  "draft with a smaller model of the same vocabulary; NEXTN: draft with the "
                  "model's own NextN (MTP) layer; drafts are verified in the decode forward "
                  "(outputs unchanged)");
  CLI::Option* num_draft_tokens =
      cmd->add_option("--speculative-num-draft-tokens", e.speculative_num_draft_tokens,
                      "Draft tree size per request and step, root included (STANDALONE with "
                      "--speculative-eagle-topk 1, NEXTN: --speculative-num-steps + 1)")
          ->capture_default_str();
  cmd->add_option("--speculative-draft-model-path", e.speculative_draft_model_path,
                  "STANDALONE: the draft model's GGUF (same vocabulary as the model)");
  cmd->add_option("--speculative-num-steps", e.speculative_num_steps,
                  "STANDALONE, NEXTN: draft depth (draft model steps) per request and step")
      ->capture_default_str();
  cmd->add_option("--speculative-eagle-topk", e.speculative_eagle_topk,
                  "STANDALONE: draft branching; 1 drafts chains, K > 1 trees that expand each "
                  "node into the draft model's K likeliest tokens")
      ->capture_default_str();
  cmd->add_option("--speculative-ngram-min-bfs-breadth", e.speculative_ngram_min_bfs_breadth)
      ->capture_default_str();
  cmd->add_option("--speculative-ngram-max-bfs-breadth", e.speculative_ngram_max_bfs_breadth)
      ->capture_default_str();
  cmd->add_option("--speculative-ngram-max-trie-depth", e.speculative_ngram_max_trie_depth)
      ->capture_default_str();
  cmd->add_option("--speculative-ngram-capacity", e.speculative_ngram_capacity,
                  "Trie nodes kept (least recently used dropped)")
      ->capture_default_str();
  cmd->add_option("--speculative-ngram-match-type", e.speculative_ngram_match_type, "BFS | PROB")
      ->capture_default_str();
  cmd->add_option("--radix-eviction-policy", e.radix_eviction_policy, "lru | lfu | fifo | priority")
      ->capture_default_str();
  cmd->add_option("--schedule-policy", e.schedule_policy,
                  "fcfs | lpm | dfs-weight | lof | random | priority")
      ->capture_default_str();
  cmd->add_option("--schedule-conservativeness", e.schedule_conservativeness,
                  "Scales the decode reserve")
      ->capture_default_str();
  cmd->add_option("--chunked-prefill-size", e.chunked_prefill_size, "-1 disables")
      ->capture_default_str();
  cmd->add_option("--max-prefill-tokens", e.max_prefill_tokens, "New prefill tokens per batch")
      ->capture_default_str();
  cmd->add_option("--max-running-requests", e.max_running_requests,
                  "Requests holding KV at once (0: from the pool size)");
  cmd->add_option("--random-seed", e.random_seed, "Seed of the random policy");
  cmd->add_option("--defer-long-prefill", e.defer_long_prefill_s,
                  "Seconds of estimated prefill from which a prompt waits while every running "
                  "decode would finish first (0: never)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--waiting-timeout", e.waiting_timeout_s,
                  "Seconds a request may wait in the queue before it fails with 503 (0: none)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--running-timeout", e.running_timeout_s,
                  "Seconds a request may run before it is aborted (0: none)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--max-open-sessions", e.max_open_sessions,
                  "Sessions (/open_session) open at once; each pins its KV while open")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--disaggregation-mode", opt->disaggregation_mode,
                  "null | prefill | decode: serve one side of a prefill/decode pair behind "
                  "smg --pd-disaggregation (docs/disaggregation.md)")
      ->check(CLI::IsMember({"null", "prefill", "decode"}))
      ->capture_default_str();
  cmd->add_option("--disaggregation-bootstrap-port", opt->disaggregation_bootstrap_port,
                  "Prefill: the port decode servers fetch KV from over UCX (default 8998; give "
                  "it to the gateway: --prefill URL PORT)");
  cmd->add_option("--disaggregation-transfer-backend", opt->disaggregation_transfer_backend,
                  "ucx (the only backend; default)");
  cmd->add_option("--disaggregation-timeout", opt->disaggregation_timeout_s,
                  "Decode: seconds a request waits for its KV before it fails with a 503")
      ->capture_default_str();
  cmd->add_option("--log-level", s.log_level, "debug | info | warning | error")
      ->capture_default_str();
  cmd->add_flag("--incremental-streaming-output", s.incremental_streaming_output,
                "Native streams send text deltas instead of cumulative text");
  cmd->add_option("--tool-call-parser", s.tool_call_parser,
                  "qwen25 (hermes) | llama3 | mistral | granite | phi4_mini | glm4 | gemma4 | "
                  "gpt-oss | json (default: from the chat template)");
  cmd->add_option(
      "--reasoning-parser", s.reasoning_parser,
      "deepseek-r1 | deepseek-v3 | qwen3 (glm45) | mistral | gemma4 | granite | gpt-oss: "
      "reasoning_content apart from content");
  cmd->add_option("--max-request-bytes", s.max_body_bytes, "Largest request body (413 above)")
      ->capture_default_str();
  cmd->add_option("--max-new-tokens-cap", s.max_new_tokens_cap,
                  "Largest max_new_tokens a request may ask (0: the context bounds it)");
  cmd->add_option("--max-batch-samples", s.max_batch_samples, "Most prompts x n in one request")
      ->capture_default_str();
  cmd->add_option("--keep-alive-timeout", s.keep_alive_timeout_s,
                  "Seconds an idle connection may take to send its next request header")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  cmd->add_option("--read-timeout", s.read_timeout_s,
                  "Seconds a request body may take to arrive after its header")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  cmd->add_option("--write-timeout", s.write_timeout_s,
                  "Seconds one write to a client may take before the connection is dropped (and "
                  "its request aborted)")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  cmd->add_option("--max-stream-buffer-bytes", s.max_stream_buffer_bytes,
                  "Unsent bytes a stream may queue for a slow client before it is aborted")
      ->check(CLI::Range(size_t{1} << 10, size_t{1} << 40))
      ->capture_default_str();
  cmd->add_option("--graceful-shutdown-timeout", s.graceful_shutdown_timeout_s,
                  "Seconds in-flight requests get to finish after SIGTERM / SIGINT (0: abort "
                  "them at once)")
      ->check(CLI::Range(0, 86400))
      ->capture_default_str();
  cmd->callback([opt, num_draft_tokens] {
    opt->num_draft_tokens_given = num_draft_tokens->count() > 0;
    Status status = RunServe(*opt);
    if (!status.ok()) {
      std::fprintf(stderr, "radixlm serve: %s\n", status.ToString().c_str());
      SetExitCode(1);
    }
  });
});

}  // namespace
}  // namespace radixlm::apps
