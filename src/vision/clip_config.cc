#include "vision/clip_config.h"

namespace radixlm::vision {
namespace {

StatusOr<int64_t> PositiveKey(const gguf::GgufFile& f, const std::string& key) {
  auto v = f.GetInt(key);
  if (!v.ok()) {
    return InvalidArgument("projector metadata: " + v.status().message() + " ('" + key + "')");
  }
  if (*v <= 0) return InvalidArgument("projector metadata: '" + key + "' must be positive");
  return *v;
}

Status ReadTriple(const gguf::GgufFile& f, const std::string& key, std::array<float, 3>* out) {
  auto arr = f.GetArray(key);
  if (!arr.ok()) {
    return InvalidArgument("projector metadata: " + arr.status().message() + " ('" + key + "')");
  }
  if ((*arr)->items.size() < 3) {
    return InvalidArgument("projector metadata: '" + key + "' needs 3 values");
  }
  for (int i = 0; i < 3; ++i) {
    const gguf::Value& v = (*arr)->items[i];
    if (!v.is_float() && !v.is_integer()) {
      return InvalidArgument("projector metadata: '" + key + "' must hold numbers");
    }
    (*out)[i] = static_cast<float>(v.AsFloat());
  }
  return Status::Ok();
}

}  // namespace

StatusOr<ClipConfig> ReadClipConfig(const gguf::GgufFile& f) {
  RADIXLM_ASSIGN_OR_RETURN(const std::string arch, f.GetStringOr("general.architecture", ""));
  if (arch != "clip") {
    return InvalidArgument("not a projector GGUF: general.architecture is '" + arch +
                           "', expected 'clip'");
  }
  RADIXLM_ASSIGN_OR_RETURN(const bool has_vision, f.GetBoolOr("clip.has_vision_encoder", false));
  if (!has_vision) {
    return InvalidArgument("the projector has no vision encoder (clip.has_vision_encoder)");
  }
  ClipConfig c;
  RADIXLM_ASSIGN_OR_RETURN(c.projector_type, f.GetStringOr("clip.projector_type", ""));
  if (c.projector_type.empty()) {
    RADIXLM_ASSIGN_OR_RETURN(c.projector_type, f.GetStringOr("clip.vision.projector_type", ""));
  }
  if (c.projector_type.empty()) {
    return InvalidArgument("projector metadata: 'clip.projector_type' is missing");
  }
  RADIXLM_ASSIGN_OR_RETURN(c.n_embd, PositiveKey(f, "clip.vision.embedding_length"));
  RADIXLM_ASSIGN_OR_RETURN(c.n_heads, PositiveKey(f, "clip.vision.attention.head_count"));
  RADIXLM_ASSIGN_OR_RETURN(c.n_ff, PositiveKey(f, "clip.vision.feed_forward_length"));
  RADIXLM_ASSIGN_OR_RETURN(c.n_layers, PositiveKey(f, "clip.vision.block_count"));
  RADIXLM_ASSIGN_OR_RETURN(c.projection_dim, PositiveKey(f, "clip.vision.projection_dim"));
  RADIXLM_ASSIGN_OR_RETURN(c.image_size, PositiveKey(f, "clip.vision.image_size"));
  RADIXLM_ASSIGN_OR_RETURN(c.patch_size, PositiveKey(f, "clip.vision.patch_size"));
  RADIXLM_ASSIGN_OR_RETURN(const int64_t kv_heads,
                           f.GetIntOr("clip.vision.attention.head_count_kv", c.n_heads));
  if (kv_heads != c.n_heads) {
    return Unimplemented("projector: grouped attention (head_count_kv != head_count)");
  }
  if (c.n_embd % c.n_heads != 0) {
    return InvalidArgument("projector metadata: embedding_length is not a multiple of the heads");
  }
  c.head_dim = c.n_embd / c.n_heads;
  RADIXLM_ASSIGN_OR_RETURN(const int64_t head_dim_key,
                           f.GetIntOr("clip.vision.attention.head_dim", c.head_dim));
  if (head_dim_key != c.head_dim) {
    return Unimplemented("projector: attention.head_dim other than embedding_length / heads");
  }
  RADIXLM_ASSIGN_OR_RETURN(const double eps,
                           f.GetFloat("clip.vision.attention.layer_norm_epsilon"));
  c.eps = static_cast<float>(eps);
  RADIXLM_RETURN_IF_ERROR(ReadTriple(f, "clip.vision.image_mean", &c.image_mean));
  RADIXLM_RETURN_IF_ERROR(ReadTriple(f, "clip.vision.image_std", &c.image_std));
  for (float s : c.image_std) {
    if (!(s > 0.0f)) return InvalidArgument("projector metadata: image_std must be positive");
  }
  RADIXLM_ASSIGN_OR_RETURN(const bool gelu, f.GetBoolOr("clip.use_gelu", false));
  RADIXLM_ASSIGN_OR_RETURN(const bool silu, f.GetBoolOr("clip.use_silu", false));
  if (gelu && silu) return InvalidArgument("projector metadata: both use_gelu and use_silu");
  c.ffn = gelu ? FfnActivation::kGelu : silu ? FfnActivation::kSilu : FfnActivation::kGeluQuick;
  RADIXLM_ASSIGN_OR_RETURN(c.scale_factor, f.GetIntOr("clip.vision.projector.scale_factor", 0));
  if (c.scale_factor < 0) {
    return InvalidArgument("projector metadata: 'clip.vision.projector.scale_factor' < 0");
  }
  return c;
}

}  // namespace radixlm::vision
