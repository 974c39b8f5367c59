#include "server/image_input.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string_view>

#include "net/http_client.h"

namespace radixlm::server {

namespace {

namespace fs = std::filesystem;

// A reference for messages: its first 64 characters.
std::string Shown(const std::string& ref) {
  return ref.size() <= 64 ? ref : ref.substr(0, 64) + "...";
}

Status TooLarge(int64_t limit) {
  return InvalidArgument("the image is larger than the limit of " + std::to_string(limit) +
                         " bytes");
}

StatusOr<std::vector<uint8_t>> ReadLocal(const std::string& path, const std::string& ref,
                                         const ImageInputLimits& limits) {
  if (limits.allowed_local_media_path.empty()) {
    return InvalidArgument("image '" + Shown(ref) +
                           "': local files are not served (start the server with "
                           "--allowed-local-media-path)");
  }
  // Both resolved (symbolic links and "..": a link inside the folder to a file outside it is
  // outside), and compared element by element ("/media" does not hold "/media2/a.png").
  std::error_code ec_allowed, ec;
  fs::path allowed = fs::weakly_canonical(limits.allowed_local_media_path, ec_allowed);
  if (!allowed.empty() && allowed.filename().empty()) allowed = allowed.parent_path();  // "dir/"
  const fs::path file = fs::weakly_canonical(path, ec);
  const auto [end, _] = std::mismatch(allowed.begin(), allowed.end(), file.begin(), file.end());
  if (ec_allowed || ec || end != allowed.end()) {
    return InvalidArgument("image '" + Shown(ref) +
                           "' is outside the allowed media folder (--allowed-local-media-path)");
  }
  if (!fs::is_regular_file(file, ec)) {
    return InvalidArgument("image '" + Shown(ref) + "': no such file");
  }
  const auto size = static_cast<int64_t>(fs::file_size(file, ec));
  if (ec) return InvalidArgument("image '" + Shown(ref) + "' cannot be read");
  if (size > limits.max_bytes) return TooLarge(limits.max_bytes);
  std::ifstream in(file, std::ios::binary);
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  if (!in.read(reinterpret_cast<char*>(bytes.data()), size)) {
    return InvalidArgument("image '" + Shown(ref) + "' cannot be read");
  }
  return bytes;
}

// The next URL of a redirect: an absolute http(s) URL, or a path on the same server.
std::string RedirectTarget(const radixlm::net::HttpTarget& from, const std::string& location) {
  if (location.rfind("http://", 0) == 0 || location.rfind("https://", 0) == 0) return location;
  if (location.empty() || location[0] != '/' || location.rfind("//", 0) == 0) return "";
  return std::string(from.tls ? "https://" : "http://") + from.host + ":" + from.port + location;
}

// GETs an http(s) image, following up to kMaxRedirects redirects within one time limit.
StatusOr<std::vector<uint8_t>> FetchImage(const std::string& url, const ImageInputLimits& limits) {
  constexpr int kMaxRedirects = 5;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(limits.fetch_timeout_s);
  std::string next = url;
  for (int hop = 0;; ++hop) {
    StatusOr<radixlm::net::HttpTarget> target = radixlm::net::ParseBaseUrl(next);
    if (!target.ok()) return InvalidArgument("image URL '" + Shown(next) + "' is malformed");
    const radixlm::net::HttpTarget server = *target;
    std::string path = target->path_prefix.empty() ? "/" : target->path_prefix;
    target->path_prefix.clear();
    radixlm::net::HttpCall call;
    call.method = "GET";
    call.path = path;
    call.timeout_s =
        std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    if (call.timeout_s <= 0) {
      return InvalidArgument("image URL '" + Shown(url) + "' could not be fetched: timed out");
    }
    std::vector<uint8_t> bytes;
    bool too_large = false;
    std::string location;
    StatusOr<int> status = radixlm::net::Fetch(
        *target, call,
        [&](std::string_view data) {
          if (too_large) return;
          if (static_cast<int64_t>(bytes.size() + data.size()) > limits.max_bytes) {
            too_large = true;
            bytes.clear();
            return;
          }
          bytes.insert(bytes.end(), data.begin(), data.end());
        },
        &location);
    if (!status.ok()) {
      return InvalidArgument("image URL '" + Shown(url) +
                             "' could not be fetched: " + status.status().message());
    }
    const bool redirect =
        *status == 301 || *status == 302 || *status == 303 || *status == 307 || *status == 308;
    if (redirect && hop < kMaxRedirects && !RedirectTarget(server, location).empty()) {
      next = RedirectTarget(server, location);
      continue;
    }
    if (*status != 200) {
      return InvalidArgument("image URL '" + Shown(url) + "' answered HTTP " +
                             std::to_string(*status) +
                             (redirect ? " (redirects are followed up to 5 times, to http(s) "
                                         "URLs or paths)"
                                       : ""));
    }
    if (too_large) return TooLarge(limits.max_bytes);
    return bytes;
  }
}

bool HasImageExtension(const std::string& ref) {
  const size_t dot = ref.rfind('.');
  if (dot == std::string::npos) return false;
  std::string ext = ref.substr(dot + 1);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == "png" || ext == "jpg" || ext == "jpeg" || ext == "webp" || ext == "gif";
}

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+' || c == '-') return 62;
  if (c == '/' || c == '_') return 63;
  return -1;
}

}  // namespace

StatusOr<std::vector<uint8_t>> DecodeBase64(std::string_view text) {
  std::vector<uint8_t> out;
  out.reserve(text.size() * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  bool padding = false;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      padding = true;
      continue;
    }
    const int v = Base64Value(c);
    if (v < 0 || padding) return InvalidArgument("the image's base64 data is malformed");
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<uint8_t>((acc >> bits) & 0xff));
    }
  }
  return out;
}

Status CheckTakesImages(bool engine_takes_images) {
  if (engine_takes_images) return Status::Ok();
  return InvalidArgument(
      "this model takes no images: the server was started without a vision "
      "projector (--mmproj)");
}

StatusOr<std::vector<uint8_t>> ReadImageReference(const std::string& ref,
                                                  const ImageInputLimits& limits) {
  if (ref.empty()) return InvalidArgument("an image reference is empty");
  if (ref.rfind("data:", 0) == 0) {
    const size_t comma = ref.find(',');
    if (comma == std::string::npos ||
        std::string_view(ref).substr(0, comma).find(";base64") == std::string_view::npos) {
      return InvalidArgument("image data URL '" + Shown(ref) +
                             "' is not base64 (data:<type>;base64,<data>)");
    }
    if (static_cast<int64_t>(ref.size() - comma) / 4 * 3 > limits.max_bytes) {
      return TooLarge(limits.max_bytes);
    }
    return DecodeBase64(std::string_view(ref).substr(comma + 1));
  }
  if (ref.rfind("http://", 0) == 0 || ref.rfind("https://", 0) == 0) return FetchImage(ref, limits);
  if (ref.rfind("file://", 0) == 0) return ReadLocal(ref.substr(7), ref, limits);
  // As SGLang tells them apart: a path ends with an image file's extension (raw base64 may
  // start with '/', as a JPEG's does).
  if (HasImageExtension(ref)) return ReadLocal(ref, ref, limits);
  if (static_cast<int64_t>(ref.size()) / 4 * 3 > limits.max_bytes) {
    return TooLarge(limits.max_bytes);
  }
  StatusOr<std::vector<uint8_t>> bytes = DecodeBase64(ref);
  if (!bytes.ok()) {
    return InvalidArgument("image '" + Shown(ref) +
                           "' is neither a URL (data:, http://, file://), a path nor base64");
  }
  return bytes;
}

}  // namespace radixlm::server
