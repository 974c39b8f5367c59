"""A small synthetic Qwen 3.5 (`qwen35`) GGUF for the end-to-end tests, in pure Python and numpy
(synth_moe.py's writer and SmolLM2-135M-Instruct's tokenizer): hidden 64, four layers (three
gated DeltaNet layers of 2 key and 4 value heads of 16, convolution of 4 taps; the fourth full
attention with its output gate, 4 query and 2 KV heads of 16, RoPE on half of each head), and,
with nextn=True, one NextN (multi-token-prediction) layer after them
(`qwen35.nextn_predict_layers` 1: a full-attention layer with nextn.eh_proj, enorm, hnorm and
shared_head_norm).

The weights are random, but shaped so that the NextN layer's drafts are often right: the
matrices that write into the residual stream are small (the token's own embedding dominates each
position's output) and eh_proj passes the normed embedding through, so speculation keeps some
drafts and rejects others. The tests check what the server does with them, not the text."""

import struct

import numpy as np

import synth_moe
from synth_moe import ARRAY, I32, _f32, _str, _u32

HIDDEN, HEADS, KV_HEADS, HEAD_DIM, LAYERS, FFN = 64, 4, 2, 16, 4, 128
TAPS, STATE, K_HEADS, V_HEADS = 4, 16, 2, 4
WRITE_SCALE = 0.2  # the residual writes' scale (see the module's docstring)


def _i32_array(values):
    return struct.pack("<IIQ", ARRAY, I32, len(values)) + b"".join(
        struct.pack("<i", v) for v in values)


def write_model(path, tokenizer_gguf, chat_template, nextn=True, seed=0):
    rng = np.random.default_rng(seed)
    a = "qwen35"
    blocks = LAYERS + (1 if nextn else 0)
    meta = {"general.architecture": _str(a),
            "general.name": _str("synthetic qwen35 (random weights, SmolLM2 tokenizer)")}
    for key, value in {"block_count": _u32(blocks), "context_length": _u32(4096),
                       "embedding_length": _u32(HIDDEN), "feed_forward_length": _u32(FFN),
                       "attention.head_count": _u32(HEADS),
                       "attention.head_count_kv": _u32(KV_HEADS),
                       "attention.key_length": _u32(HEAD_DIM),
                       "attention.value_length": _u32(HEAD_DIM),
                       "attention.layer_norm_rms_epsilon": _f32(1e-6),
                       "rope.freq_base": _f32(1e7), "rope.dimension_count": _u32(HEAD_DIM // 2),
                       "rope.dimension_sections": _i32_array([2, 1, 1, 0]),
                       "full_attention_interval": _u32(4), "ssm.conv_kernel": _u32(TAPS),
                       "ssm.state_size": _u32(STATE), "ssm.group_count": _u32(K_HEADS),
                       "ssm.time_step_rank": _u32(V_HEADS),
                       "ssm.inner_size": _u32(V_HEADS * STATE)}.items():
        meta[f"{a}.{key}"] = value
    if nextn:
        meta[f"{a}.nextn_predict_layers"] = _u32(1)
    tok = synth_moe.tokenizer_metadata(tokenizer_gguf)
    tok["tokenizer.chat_template"] = _str(chat_template)
    meta.update(tok)
    n_vocab = struct.unpack_from("<IQ", tok["tokenizer.ggml.tokens"], 4)[1]

    def matrix(rows, cols, scale=1.0):  # numpy [rows, cols]: GGUF dims {cols, rows}
        return rng.uniform(-1, 1, (rows, cols)).astype(np.float32) * np.float32(
            scale * np.sqrt(3.0 / cols))

    def norm(n):
        return (1.0 + rng.uniform(-0.3, 0.3, n)).astype(np.float32)

    qs, kvs = HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM
    key, value = K_HEADS * STATE, V_HEADS * STATE
    channels = 2 * key + value
    tensors = [("token_embd.weight", rng.uniform(-1.7, 1.7, (n_vocab, HIDDEN)).astype(np.float32)),
               ("output_norm.weight", norm(HIDDEN)),
               ("output.weight", matrix(n_vocab, HIDDEN))]
    for i in range(blocks):
        p = f"blk.{i}."
        tensors.append((p + "attn_norm.weight", norm(HIDDEN)))
        if i < LAYERS and (i + 1) % 4 != 0:
            tensors += [(p + "attn_qkv.weight", matrix(channels, HIDDEN)),
                        (p + "attn_gate.weight", matrix(value, HIDDEN)),
                        (p + "ssm_conv1d.weight",
                         rng.uniform(-0.6, 0.6, (channels, TAPS)).astype(np.float32)),
                        (p + "ssm_dt.bias", rng.uniform(-1, 1, V_HEADS).astype(np.float32)),
                        (p + "ssm_a", -np.exp(rng.uniform(-1, 1, V_HEADS)).astype(np.float32)),
                        (p + "ssm_beta.weight", matrix(V_HEADS, HIDDEN)),
                        (p + "ssm_alpha.weight", matrix(V_HEADS, HIDDEN)),
                        (p + "ssm_norm.weight", norm(STATE)),
                        (p + "ssm_out.weight", matrix(HIDDEN, value, WRITE_SCALE))]
        else:
            tensors += [(p + "attn_q.weight", matrix(2 * qs, HIDDEN)),
                        (p + "attn_k.weight", matrix(kvs, HIDDEN)),
                        (p + "attn_v.weight", matrix(kvs, HIDDEN)),
                        (p + "attn_q_norm.weight", norm(HEAD_DIM)),
                        (p + "attn_k_norm.weight", norm(HEAD_DIM)),
                        (p + "attn_output.weight", matrix(HIDDEN, qs, WRITE_SCALE))]
        tensors += [(p + "post_attention_norm.weight", norm(HIDDEN)),
                    (p + "ffn_gate.weight", matrix(FFN, HIDDEN)),
                    (p + "ffn_up.weight", matrix(FFN, HIDDEN)),
                    (p + "ffn_down.weight", matrix(HIDDEN, FFN, WRITE_SCALE))]
        if i >= LAYERS:  # the NextN layer's own tensors
            eh = matrix(HIDDEN, 2 * HIDDEN, 0.1)
            eh[:, :HIDDEN] += np.eye(HIDDEN, dtype=np.float32)
            tensors += [(p + "nextn.eh_proj.weight", eh), (p + "nextn.enorm.weight", norm(HIDDEN)),
                        (p + "nextn.hnorm.weight", norm(HIDDEN)),
                        (p + "nextn.shared_head_norm.weight", norm(HIDDEN))]
    synth_moe.write_gguf(path, meta, tensors)
