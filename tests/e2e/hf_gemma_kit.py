"""A Gemma 3 Hugging Face folder for the end-to-end tests and the converter oracle, written in
Python from the shipped gemma-3-270m GGUF's vocabulary (RADIXLM_DEFAULT_MODEL):

- tokenizer.model: the SentencePiece ModelProto the GGUF came from, rebuilt (pieces, scores and
  types as llama.cpp's converter read them; user-defined pieces with U+2581 for spaces, the
  GGUF's control-typed <unk> as UNKNOWN, control and user-defined pieces scored 0) and
  serialized with the `sentencepiece` package's sentencepiece_model_pb2 (protobuf);
- tokenizer.json: what transformers' GemmaConverter makes of that model, built with the
  `tokenizers` package: BPE with byte_fallback over the pieces, a merge for every split of
  every piece ranked by the piece's score (transformers' generate_merges), normalizer
  Replace(" ", "\u2581"), pre-tokenizer Split(" ", merged_with_previous), control pieces as
  special added tokens and user-defined ones as non-special added tokens;
- tokenizer_config.json (special tokens, add_bos_token, the GGUF's chat template or, as for
  gemma-3-270m which has none, google/gemma-3-*-it's from tests/chat/templates/gemma3.jinja,
  added_tokens_decoder), config.json of a small Gemma3ForCausalLM and random numpy weights in
  model.safetensors (hf_folder_kit.save_safetensors).

The weights are random: the tests check loading, tokenization and serving, not the text."""

import json
import pathlib

import numpy as np

import hf_folder_kit

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
SPACE = "\u2581"

# google/gemma-3-*-it's chat template, for a GGUF without one (gemma-3-270m has none).
GEMMA3_TEMPLATE = (pathlib.Path(__file__).resolve().parents[1] / "chat" / "templates"
                   / "gemma3.jinja")

SHAPE = dict(layers=2, hidden=64, heads=2, kv_heads=1, head_dim=32, ffn=128)


def spm_pieces(meta):
    """[(piece, score, type)] of the SentencePiece model behind a GGUF's SPM vocabulary."""
    tokens = meta["tokenizer.ggml.tokens"]
    scores = meta["tokenizer.ggml.scores"]
    types = meta["tokenizer.ggml.token_type"]
    unk = meta.get("tokenizer.ggml.unknown_token_id", -1)
    pieces = []
    for i, (t, s, ty) in enumerate(zip(tokens, scores, types)):
        if i == unk:
            ty = UNKNOWN
        if ty == USER_DEFINED:
            t = t.replace(" ", SPACE)  # the converter wrote them with spaces
        if ty in (CONTROL, UNKNOWN, USER_DEFINED):
            s = 0.0
        pieces.append((t, float(s), ty))
    return pieces


def write_tokenizer_model(path, pieces, meta, add_dummy_prefix=False):
    from sentencepiece import sentencepiece_model_pb2 as pb

    m = pb.ModelProto()
    for t, s, ty in pieces:
        p = m.pieces.add()
        p.piece, p.score, p.type = t, s, ty
    m.trainer_spec.model_type = pb.TrainerSpec.BPE
    m.trainer_spec.vocab_size = len(pieces)
    m.trainer_spec.byte_fallback = True
    m.trainer_spec.unk_id = meta.get("tokenizer.ggml.unknown_token_id", 0)
    m.trainer_spec.bos_id = meta["tokenizer.ggml.bos_token_id"]
    m.trainer_spec.eos_id = meta["tokenizer.ggml.eos_token_id"]
    m.trainer_spec.pad_id = meta.get("tokenizer.ggml.padding_token_id", -1)
    m.normalizer_spec.name = "identity"
    m.normalizer_spec.add_dummy_prefix = add_dummy_prefix
    m.normalizer_spec.remove_extra_whitespaces = False
    m.normalizer_spec.escape_whitespaces = True
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def generate_merges(vocab, scores):
    """transformers' generate_merges(vocab, vocab_scores): every split of every piece into two
    pieces, the pieces by score (highest first), a piece's splits by their halves' ids; then
    stably sorted by (score, len(left), len(right)), highest first."""
    merges = []
    for piece, score in scores.items():
        local = []
        for i in range(1, len(piece)):
            left, right = piece[:i], piece[i:]
            if left in vocab and right in vocab:
                local.append((left, right, score))
        local.sort(key=lambda x: (vocab[x[0]], vocab[x[1]]))
        merges.extend(local)
    merges.sort(key=lambda v: (v[2], len(v[0]), len(v[1])), reverse=True)
    return [(a, b) for a, b, _ in merges]


def set_space_style(tok, style):
    """How `tok` turns spaces into U+2581: "gemma" (normalizer Replace, no prefix space, a
    Split(" ") pre-tokenizer that splits nothing), "prepend" (Llama 2 / Mistral v0.1: normalizer
    Prepend + Replace), "metaspace-first" / "metaspace-always" (transformers' newer Llama
    converters: no normalizer, a non-splitting Metaspace pre-tokenizer)."""
    from tokenizers import normalizers, pre_tokenizers

    if style == "gemma":
        tok.normalizer = normalizers.Replace(" ", SPACE)
        tok.pre_tokenizer = pre_tokenizers.Split(" ", "merged_with_previous")
    elif style == "prepend":
        tok.normalizer = normalizers.Sequence([normalizers.Prepend(SPACE),
                                               normalizers.Replace(" ", SPACE)])
        tok.pre_tokenizer = None
    else:
        tok.normalizer = None
        tok.pre_tokenizer = pre_tokenizers.Metaspace(
            replacement=SPACE, prepend_scheme=style.split("-")[1], split=False)


def build_tokenizer(pieces, unk_token="<unk>", prefix=False):
    """The `tokenizers.Tokenizer` transformers' GemmaConverter makes of `pieces` (prefix=False),
    or a Llama-2 style one (prefix=True: set_space_style "prepend")."""
    from tokenizers import AddedToken, Tokenizer, decoders, models

    vocab = {t: i for i, (t, _, _) in enumerate(pieces)}
    scores = {t: s for t, s, _ in pieces}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=generate_merges(vocab, scores),
                               unk_token=unk_token, fuse_unk=True, byte_fallback=True))
    set_space_style(tok, "prepend" if prefix else "gemma")
    tok.decoder = decoders.Sequence([decoders.Replace(SPACE, " "), decoders.ByteFallback(),
                                     decoders.Fuse()])
    added = [AddedToken(t, normalized=False, special=ty in (CONTROL, UNKNOWN))
             for t, _, ty in pieces if ty in (CONTROL, UNKNOWN, USER_DEFINED)]
    tok.add_tokens(added)
    for t, _, ty in pieces[:50]:
        assert tok.token_to_id(t) == vocab[t]
    return tok


def write_folder(folder, gguf, seed=0, shape=None, files=("tokenizer.json", "tokenizer.model"),
                 dtype="BF16"):
    """Writes the folder with the tokenizer files named in `files` (matrices in `dtype`: F32,
    F16 or BF16; `shape` overrides SHAPE's keys, plus sliding_window); returns
    (tokenizers.Tokenizer, pieces)."""
    meta = hf_folder_kit.gguf_tokenizer(gguf)
    pieces = spm_pieces(meta)
    tok = build_tokenizer(pieces)
    if "tokenizer.json" in files:
        tok.save(str(folder / "tokenizer.json"))
    if "tokenizer.model" in files:
        write_tokenizer_model(folder / "tokenizer.model", pieces, meta)
    tokens = [t for t, _, _ in pieces]
    bos, eos = meta["tokenizer.ggml.bos_token_id"], meta["tokenizer.ggml.eos_token_id"]
    decoder = {str(i): {"content": t, "special": ty in (CONTROL, UNKNOWN), "normalized": False,
                        "lstrip": False, "rstrip": False, "single_word": False}
               for i, (t, _, ty) in enumerate(pieces) if ty in (CONTROL, UNKNOWN, USER_DEFINED)}
    (folder / "tokenizer_config.json").write_text(json.dumps({
        "bos_token": tokens[bos], "eos_token": tokens[eos], "unk_token": "<unk>",
        "pad_token": "<pad>", "add_bos_token": True, "add_eos_token": False,
        "chat_template": meta.get("tokenizer.chat_template") or GEMMA3_TEMPLATE.read_text(),
        "added_tokens_decoder": decoder}, indent=1))

    s = {**SHAPE, **(shape or {})}
    h, hd, vocab = s["hidden"], s["head_dim"], len(tokens)
    config = {
        "architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text",
        "num_hidden_layers": s["layers"], "hidden_size": h, "intermediate_size": s["ffn"],
        "num_attention_heads": s["heads"], "num_key_value_heads": s["kv_heads"],
        "head_dim": hd, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
        "rope_local_base_freq": 10000.0, "sliding_window": s.get("sliding_window", 512),
        "sliding_window_pattern": 6,
        "query_pre_attn_scalar": hd, "max_position_embeddings": 4096, "vocab_size": vocab,
        "hidden_activation": "gelu_pytorch_tanh", "tie_word_embeddings": True,
        "torch_dtype": {"F32": "float32", "F16": "float16"}.get(dtype, "bfloat16"),
        "bos_token_id": bos, "eos_token_id": [eos, 106],
        "pad_token_id": 0}
    (folder / "config.json").write_text(json.dumps(config, indent=2))

    rng = np.random.default_rng(seed)

    def w(*dims, scale=None):
        if scale is None:
            scale = 1 / np.sqrt(dims[-1]) if len(dims) == 2 else 0.1
        return (rng.standard_normal(dims) * scale).astype(np.float32)

    q, kv = s["heads"] * hd, s["kv_heads"] * hd
    # Tied embeddings with a spread of logits of about 3 (unit rows would make them one-hot).
    tensors = {"model.embed_tokens.weight": w(vocab, h, scale=3 / np.sqrt(h)),
               "model.norm.weight": w(h)}
    for layer in range(s["layers"]):
        p = f"model.layers.{layer}."
        tensors.update({
            # Post-norms of about 3 (Gemma adds 1 to the stored 2): the blocks outweigh the
            # input embedding, which the tied head would otherwise make the certain next token.
            p + "input_layernorm.weight": w(h), p + "post_attention_layernorm.weight": 2 + w(h),
            p + "pre_feedforward_layernorm.weight": w(h),
            p + "post_feedforward_layernorm.weight": 2 + w(h),
            p + "self_attn.q_norm.weight": w(hd), p + "self_attn.k_norm.weight": w(hd),
            p + "self_attn.q_proj.weight": w(q, h), p + "self_attn.k_proj.weight": w(kv, h),
            p + "self_attn.v_proj.weight": w(kv, h), p + "self_attn.o_proj.weight": w(h, q),
            p + "mlp.gate_proj.weight": w(s["ffn"], h), p + "mlp.up_proj.weight": w(s["ffn"], h),
            p + "mlp.down_proj.weight": w(h, s["ffn"])})
    hf_folder_kit.save_safetensors(folder / "model.safetensors", tensors, dtype)
    return tok, pieces
