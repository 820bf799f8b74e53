#!/usr/bin/env python3
"""Write a tiny LLaMA-architecture GGUF model for end-to-end tests.

Usage: make_tiny_gguf.py OUT.gguf

The model has random weights from a fixed seed, so the same file comes out
every time (byte for byte). It is meant to be served by llama.cpp's
`llama-server` and by llama-cpp-python's server on loopback, so that the
benchmark client can be tested against real engines without downloading a
model.

What it contains:
  * architecture "llama": 2 layers, embedding 64, 4 attention heads,
    feed-forward 192, context length 8192 (the server's `-c` decides the
    context actually used);
  * a GPT-2 style byte-level BPE tokenizer: the 256 byte tokens, merges
    learned here from a short English text (so ordinary English words become
    a few tokens each), and control tokens <s>, </s>, <|im_start|>,
    <|im_end|>; a ChatML chat template for /v1/chat/completions;
  * an output layer shaped so that generated text is printable ASCII (no
    broken UTF-8), and so that </s> (end of sequence) is sampled now and then:
    without `ignore_eos` a long generation stops early, which is the
    behaviour a benchmark must detect and prevent.

Needs the `gguf` and `numpy` Python packages. Takes well under a second.
"""

import collections
import re
import sys

import numpy as np
import gguf

SEED = 20240611

# Model shape.
N_LAYER = 2
N_EMBD = 64
N_HEAD = 4
N_HEAD_KV = 4
N_FF = 192
N_CTX_TRAIN = 8192
N_MERGES = 320

# Control tokens come first, so their ids are small and fixed.
SPECIAL_TOKENS = ["<s>", "</s>", "<|im_start|>", "<|im_end|>"]
BOS_ID = 0
EOS_ID = 1

# ChatML: the same template many real models ship.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)

# Text the BPE merges are learned from: plain English about benchmarking,
# so prompts made of English words tokenize into short sequences.
CORPUS = """
The quick brown fox jumps over the lazy dog. A server answers requests from
many users at the same time, and each user waits for the first token before
the text starts to flow. We measure the time to first token, the time per
output token and the total throughput of the server while the number of
concurrent requests grows from one to one hundred. The prompt is long and the
answer is short, or the prompt is short and the answer is long; both cases
matter for people who run a model in production. This is a test of the
benchmark tool, and the numbers it reports must be honest: every request asks
for a fixed number of tokens, every prompt has a unique prefix, and the
context length of the server is known before the sweep begins. When the
machine is busy the speed goes down, and when the cache is warm the first
token comes sooner. Write the results to a file, draw a chart, and compare
the new host with the old one. There are some words that people use in
every sentence: the, of, and, to, in, is, it, that, for, on, with, as, was,
be, at, by, this, have, from, or, one, had, not, but, what, all, were, when,
we, there, can, an, your, which, their, said, if, do, will, each, about,
how, up, out, them, then, she, many, some, so, these, would, other, into,
has, more, her, two, like, him, see, time, could, no, make, than, first,
been, its, who, now, people, my, made, over, did, down, only, way, find,
use, may, water, long, little, very, after, words, called, just, where,
most, know, get, through, back, much, before, go, good, new, write, our,
used, me, man, day, too, any, same, right, look, think, also, around,
another, came, come, work, three, word, must, because, does, part, even,
place, well, such, here, take, why, things, help, put, years, different,
away, again, off, went, old, number, great, tell, men, say, small, every,
found, still, between, name, should, home, big, give, air, line, set, own,
under, read, last, never, us, left, end, along, while, might, next, sound,
below, saw, something, thought, both, few, those, always, looked, show,
large, often, together, asked, house, world, going, want, school, important,
until, form, food, keep, children, feet, land, side, without, boy, once,
animals, life, enough, took, sometimes, four, head, above, kind, began,
almost, live, page, got, earth, need, far, hand, high, year, mother, light,
parts, country, father, let, night, following, picture, being, study,
second, eyes, soon, times, story, boys, since, white, days, ever, paper,
hard, near, sentence, better, best, across, during, today, others, however,
sure, means, knew, try, told, young, miles, sun, ways, thing, whole, hear,
example, heard, several, change, answer, room, sea, against, top, turned,
learn, point, city, play, toward, five, using, himself, usually.
"""


def bytes_to_unicode():
    """GPT-2's reversible map from the 256 byte values to printable characters.

    Byte-level BPE vocabularies store every token as a string of these
    characters; llama.cpp's "gpt2" tokenizer expects exactly this map
    (for example, a space is stored as 'Ġ').
    """
    bs = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, (chr(c) for c in cs)))


def learn_merges(text, byte_map, n_merges):
    """Learn BPE merges from text, deterministically.

    Words are split like GPT-2's pre-tokenizer does (a word keeps its leading
    space), mapped to byte characters, and the most frequent adjacent pair is
    merged repeatedly. Ties are broken by the pair itself, so the result does
    not depend on dictionary order.
    """
    pieces = re.findall(r"'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+", text)
    words = collections.Counter(
        tuple(byte_map[b] for b in piece.encode("utf-8")) for piece in pieces
    )
    merges = []
    for _ in range(n_merges):
        pairs = collections.Counter()
        for word, count in words.items():
            for pair in zip(word, word[1:]):
                pairs[pair] += count
        if not pairs:
            break
        best = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))[0]
        merges.append(best)
        merged = {}
        for word, count in words.items():
            out = []
            i = 0
            while i < len(word):
                if i + 1 < len(word) and (word[i], word[i + 1]) == best:
                    out.append(word[i] + word[i + 1])
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            key = tuple(out)
            merged[key] = merged.get(key, 0) + count
        words = merged
    return merges


def build_vocab():
    """Return (tokens, token_types, merges, printable_mask)."""
    byte_map = bytes_to_unicode()
    merges = learn_merges(CORPUS, byte_map, N_MERGES)

    tokens = list(SPECIAL_TOKENS)
    types = [int(gguf.TokenType.CONTROL)] * len(SPECIAL_TOKENS)
    # Whether the model may generate the token: printable ASCII only.
    printable = [False] * len(SPECIAL_TOKENS)

    for b in range(256):
        tokens.append(byte_map[b])
        types.append(int(gguf.TokenType.NORMAL))
        printable.append(0x20 <= b <= 0x7E)

    seen = set(tokens)
    for left, right in merges:
        tok = left + right
        if tok in seen:
            continue
        seen.add(tok)
        tokens.append(tok)
        types.append(int(gguf.TokenType.NORMAL))
        # Merges are learned from ASCII text, so merged tokens are printable
        # unless they contain a newline.
        printable.append("Ċ" not in tok)

    merge_strings = [f"{left} {right}" for left, right in merges]
    return tokens, types, merge_strings, printable


def build_tensors(rng, n_vocab, printable):
    """Random weights for a LLaMA model, as float32 numpy arrays.

    Shapes follow numpy order (rows = output features); GGUF stores the
    reverse, which is what llama.cpp expects.
    """
    head_dim = N_EMBD // N_HEAD
    t = {}

    # Token embeddings: dimension 0 is a constant 1.0 in every token and the
    # layers below add little to it, so after the final RMS norm dimension 0
    # of the hidden state is always clearly positive. The output layer uses
    # that dimension as a per-token bias (see below).
    emb = rng.normal(0.0, 0.5, size=(n_vocab, N_EMBD))
    emb[:, 0] = 1.0
    t["token_embd.weight"] = emb

    def lin(n_out, n_in, std=0.05):
        return rng.normal(0.0, std, size=(n_out, n_in))

    for i in range(N_LAYER):
        p = f"blk.{i}."
        t[p + "attn_norm.weight"] = np.ones(N_EMBD)
        t[p + "attn_q.weight"] = lin(N_HEAD * head_dim, N_EMBD, 0.2)
        t[p + "attn_k.weight"] = lin(N_HEAD_KV * head_dim, N_EMBD, 0.2)
        t[p + "attn_v.weight"] = lin(N_HEAD_KV * head_dim, N_EMBD)
        t[p + "attn_output.weight"] = lin(N_EMBD, N_HEAD * head_dim)
        t[p + "ffn_norm.weight"] = np.ones(N_EMBD)
        t[p + "ffn_gate.weight"] = lin(N_FF, N_EMBD)
        t[p + "ffn_up.weight"] = lin(N_FF, N_EMBD)
        t[p + "ffn_down.weight"] = lin(N_EMBD, N_FF)

    t["output_norm.weight"] = np.ones(N_EMBD)

    # Output layer: random rows give varied text; column 0 (the always
    # positive hidden dimension) pushes tokens that must not be generated far
    # down (control tokens, bytes that are not printable ASCII) and gives
    # </s> a small boost: with llama-server's default sampling and no
    # `ignore_eos`, a generation ends after about 30 tokens on average (often
    # much sooner), so a request for 100+ tokens almost always comes back short.
    out = rng.normal(0.0, 0.15, size=(n_vocab, N_EMBD))
    out[:, 0] = np.where(printable, 0.0, -10.0)
    out[EOS_ID, 0] = 0.6
    t["output.weight"] = out

    return {name: arr.astype(np.float32) for name, arr in t.items()}


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: make_tiny_gguf.py OUT.gguf\n")
        return 2
    out_path = sys.argv[1]

    tokens, types, merges, printable = build_vocab()
    n_vocab = len(tokens)
    tensors = build_tensors(np.random.RandomState(SEED), n_vocab, printable)

    w = gguf.GGUFWriter(out_path, "llama")
    w.add_name("llmsweep-tiny")
    w.add_file_type(gguf.LlamaFileType.ALL_F32)

    w.add_vocab_size(n_vocab)
    w.add_context_length(N_CTX_TRAIN)
    w.add_embedding_length(N_EMBD)
    w.add_block_count(N_LAYER)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_HEAD_KV)
    w.add_rope_dimension_count(N_EMBD // N_HEAD)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-5)

    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(BOS_ID)
    w.add_eos_token_id(EOS_ID)
    w.add_add_bos_token(True)
    w.add_chat_template(CHAT_TEMPLATE)

    for name, arr in tensors.items():
        w.add_tensor(name, arr)

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print(f"{out_path}: {n_vocab} tokens, {len(merges)} merges, {len(tensors)} tensors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
