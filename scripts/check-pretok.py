#!/usr/bin/env python3
"""Differential check of examples/llama/pretok.c: the hand-written scanners
against the pre-tokenizer regexes themselves, run by the `regex` package (a
backtracking engine with Unicode classes; pip install regex), on random
strings of characters the regexes tell apart.

The regexes are llama.cpp's forms (src/llama-vocab.cpp), written for
Python's engine with the adjustments llama.cpp's own matching makes: \\s is
White_Space, white space beyond ASCII is no other character (llama.cpp
replaces it with \\x0b before matching), and gpt-4o's upper / lower classes
are "a letter not [a-z]" / "a letter not [A-Z]". Each regex splits every
piece the previous one left; the text between matches is one piece, or one
piece per character for the types llama.cpp runs with its own code.

Usage, from the repository root after building llama_model:
    python3 scripts/check-pretok.py [build-dir] [cases] [seed]
Prints the first mismatches and their count; exit status 1 if any.
"""
import os
import random
import subprocess
import sys
import tempfile

import regex

WS = "\\t\\n\\x0b\\x0c\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"
S, NS = "[" + WS + "]", "[^" + WS + "]"
C = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
U, LW = r"(?:(?=\p{L})[^a-z])", r"(?:(?=\p{L})[^A-Z])"
CJK = "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+"
BLOOM = " ?[^(" + WS + "|.,!?\u2026\u3002\uff0c\u3001\u0964\u06d4\u060c)]+"
DS_LETTERS = ("A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af"
              "\u0370-\u0373\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5"
              "\u03f7-\u0481\u048a-\u052f\u0531-\u0556")  # the Latin, Greek, Cyrillic, Armenian part


def rx(pattern, single=False):
    """\\s and \\S as White_Space; single: unmatched characters one piece each."""
    p = pattern.replace("\\s", "\x01").replace("\\S", "\x02")
    p = p.replace("[^\x01", "[^" + WS).replace("\x01", S).replace("\x02", NS)
    return regex.compile(p), single


GPT2 = rx(r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+", True)


def llama3(digits, single):
    return rx(C + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}" + digits + r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+", single)


def gpt4o(digits, contraction):
    word = r"[^\r\n\p{L}\p{N}]?"
    return rx(word + U + "*" + LW + "+" + contraction + "|" + word + U + "+" + LW + "*" + contraction +
              r"|\p{N}" + digits + r"| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")


PRES = {
    "default": [rx(r"[\p{P}\$\+<=>\^~\|]+"), GPT2, rx(r"\p{N}+"), rx(r"[0-9][0-9][0-9]")],
    "gpt-2": [GPT2],
    "llama3": [llama3("{1,3}", True)],
    "qwen2": [llama3("", False)],
    "qwen35": [rx(C + r"|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")],
    "seed-coder": [rx(C + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+")],
    "bailingmoe": [rx(r"'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+")],
    "gpt-4o": [gpt4o("{1,3}", C + "?")],
    "tekken": [gpt4o("", "")],
    "deepseek-llm": [rx(r"[\r\n]"), rx(r"\s?[" + DS_LETTERS + "]+"), rx(r"\s?[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002]+"),
                     rx(r"\s+\Z"), rx(CJK), rx(r"\p{N}+")],
    "deepseek-coder": [rx(r"[\r\n]"), rx(r"\s?\p{L}+"), rx(r"\s?\p{P}+"), rx(CJK), rx(r"\p{N}")],
    "deepseek-v3": [rx(r"\p{N}{1,3}"), rx("[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"),
                    rx(r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")],
    "falcon": [rx(r"[\p{P}\$\+<=>\^~\|`]+"), GPT2, rx(r"[0-9][0-9][0-9]")],
    "starcoder": [rx(r"\p{N}"), GPT2],
    "bloom": [rx(BLOOM)],
    "viking": [rx(BLOOM), rx(r"\p{N}")],
}

# characters of every class the regexes tell apart (all assigned in Unicode 14, the table's version)
ALPHABET = ["a", "b", "x", "Z", "Q", "s", "t", "m", "d", "re", "ve", "ll", "S", "T", "RE", "LL", "D", "\u00e9", "\u00c9", "\u00df",
            "\u00c4", "\u0436", "\u0416", "\u6771", "\u4eac", "\uac00", "\u3042", "\u30a2", "\u30fc", "\u0915", "\u093f", "1", "2",
            "3", "\u0663", "\u00bd", " ", "  ", "\t", "\n", "\r", "\xa0", "\u3000", "'", "!", ".", ",", "$", "+", "=", "`", "/",
            "(", ")", "|", "-", "_", "\u0301", "\U0001f999", "\u2026", "\u3002", "\uff0c", "\u2019"]

DRIVER = r"""
#include "llama.h"
#include <stdio.h>
#include <string.h>
/* stdin: "pre hex-bytes" per line; stdout: the byte offsets where the pieces end */
int main(void) {
    static char line[1 << 16], text[1 << 15];
    static size_t ends[1 << 15];
    while (fgets(line, sizeof line, stdin)) {
        char * sp = strchr(line, ' ');
        size_t n = 0;
        *sp = 0;
        for (const char * h = sp + 1; h[0] && h[0] != '\n'; h += 2) { unsigned b; sscanf(h, "%2x", &b); text[n++] = (char) b; }
        const struct llama_pre * pre = llama_pre_find(line);
        const size_t k = pre ? llama_pre_split(pre, text, n, ends) : 0;
        for (size_t i = 0; i < k; i++) printf(i ? ",%zu" : "%zu", ends[i]);
        printf("\n");
    }
    return 0;
}
"""


def expected(pre, text):
    """The byte offsets where the pieces end, by the regexes."""
    t = "".join("\x0b" if ord(c) > 0x7f and regex.match(S, c) else c for c in text)
    ends = [len(t)] if t else []
    for pattern, single in PRES[pre]:
        out, a = [], 0
        for b in ends:
            piece, gap = t[a:b], 0
            for m in pattern.finditer(piece):
                if m.start() > gap:
                    out += [a + k + 1 for k in range(gap, m.start())] if single else [a + m.start()]
                out.append(a + m.end())
                gap = m.end()
            if gap < len(piece):
                out += [a + k + 1 for k in range(gap, len(piece))] if single else [b]
            a = b
        ends = out
    offset = [0]
    for c in text:
        offset.append(offset[-1] + len(c.encode()))
    return ",".join(str(offset[e]) for e in ends)


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    n_cases = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
    random.seed(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "split.c"), os.path.join(tmp, "split")
        with open(src, "w") as f:
            f.write(DRIVER)
        subprocess.run(["cc", "-O1", "-Iexamples/llama", "-Iinclude", src, os.path.join(build, "examples/llama/libllama_model.a"),
                        os.path.join(build, "libggmlr.a"), "-lm", "-lpthread", "-o", exe], check=True)
        cases = [(random.choice(list(PRES)), "".join(random.choice(ALPHABET) for _ in range(random.randint(1, 14)))) for _ in range(n_cases)]
        got = subprocess.run([exe], input="".join("%s %s\n" % (p, t.encode().hex()) for p, t in cases).encode(),
                             capture_output=True, check=True).stdout.decode().split("\n")
    bad = 0
    for (pre, text), g in zip(cases, got):
        want = expected(pre, text)
        if g != want:
            bad += 1
            if bad <= 10:
                print("%s %r: ends %s, the regexes %s" % (pre, text, g, want))
    print("%d mismatches in %d cases (%d types)" % (bad, n_cases, len(PRES)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
