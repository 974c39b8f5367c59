#include "model/recurrent_state.h"

#include <cstdlib>
#include <cstring>

#include "util/check.h"

namespace radixlm::model {

StatusOr<std::unique_ptr<RecurrentState>> RecurrentState::Create(const ModelConfig& c,
                                                                 int64_t n_slots) {
  if (!c.IsHybrid()) return InvalidArgument("recurrent state: the model has no linear layers");
  if (n_slots < 1) return InvalidArgument("recurrent state needs at least one slot");
  std::unique_ptr<RecurrentState> s(new RecurrentState());
  s->n_slots_ = n_slots;
  s->conv_floats_ = (c.ssm_conv_kernel - 1) * c.LinearConvChannels();
  s->delta_floats_ = c.ssm_n_v_heads * c.ssm_state_size * c.ssm_state_size;
  s->layer_floats_ = s->conv_floats_ + s->delta_floats_;
  int64_t n_linear = 0;
  for (int64_t l = 0; l < c.n_layers; ++l) {
    s->layer_index_.push_back(c.IsLinearLayer(l) ? n_linear++ : -1);
  }
  s->slot_floats_ = s->layer_floats_ * n_linear;
  const auto floats = static_cast<size_t>(s->slot_floats_) * static_cast<size_t>(n_slots);
  s->data_.reset(static_cast<float*>(std::calloc(floats, sizeof(float))));
  if (s->data_ == nullptr) {
    return ResourceExhausted("cannot allocate " + std::to_string((floats * 4) >> 20) +
                             " MiB of recurrent state");
  }
  return s;
}

int64_t RecurrentState::SlotBytes(const ModelConfig& c) {
  int64_t n_linear = 0;
  for (int64_t l = 0; l < c.n_layers; ++l) n_linear += c.IsLinearLayer(l) ? 1 : 0;
  const int64_t layer_floats = (c.ssm_conv_kernel - 1) * c.LinearConvChannels() +
                               c.ssm_n_v_heads * c.ssm_state_size * c.ssm_state_size;
  return n_linear * layer_floats * static_cast<int64_t>(sizeof(float));
}

void RecurrentState::FreeDeleter::operator()(float* p) const { std::free(p); }

float* RecurrentState::Layer(int64_t layer, int64_t slot) {
  RADIXLM_DCHECK(layer_index_[layer] >= 0 && slot >= 0 && slot < n_slots_);
  return data_.get() + slot * slot_floats_ + layer_index_[layer] * layer_floats_;
}

float* RecurrentState::Conv(int64_t layer, int64_t slot) { return Layer(layer, slot); }

float* RecurrentState::Delta(int64_t layer, int64_t slot) {
  return Layer(layer, slot) + conv_floats_;
}

void RecurrentState::Clear(int64_t slot) {
  std::memset(data_.get() + slot * slot_floats_, 0,
              static_cast<size_t>(slot_floats_) * sizeof(float));
}

void RecurrentState::Copy(int64_t from, int64_t to) {
  RADIXLM_CHECK(from >= 0 && from < n_slots_ && to >= 0 && to < n_slots_);
  if (from == to) return;
  std::memcpy(data_.get() + to * slot_floats_, data_.get() + from * slot_floats_,
              static_cast<size_t>(slot_floats_) * sizeof(float));
}

namespace {

Status CheckSlotCopy(int64_t slot, int64_t n_slots, size_t bytes, int64_t slot_bytes) {
  if (slot < 0 || slot >= n_slots) {
    return InvalidArgument("state slot " + std::to_string(slot) + " outside [0, " +
                           std::to_string(n_slots) + ")");
  }
  if (bytes != static_cast<size_t>(slot_bytes)) {
    return InvalidArgument("a state slot holds " + std::to_string(slot_bytes) + " bytes, not " +
                           std::to_string(bytes));
  }
  return Status::Ok();
}

}  // namespace

Status RecurrentState::ReadSlot(int64_t slot, std::span<uint8_t> out) const {
  RADIXLM_RETURN_IF_ERROR(CheckSlotCopy(slot, n_slots_, out.size(), slot_bytes()));
  std::memcpy(out.data(), data_.get() + slot * slot_floats_, out.size());
  return Status::Ok();
}

Status RecurrentState::WriteSlot(int64_t slot, std::span<const uint8_t> in) {
  RADIXLM_RETURN_IF_ERROR(CheckSlotCopy(slot, n_slots_, in.size(), slot_bytes()));
  std::memcpy(data_.get() + slot * slot_floats_, in.data(), in.size());
  return Status::Ok();
}

}  // namespace radixlm::model
