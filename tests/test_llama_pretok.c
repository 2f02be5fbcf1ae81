/* test_llama_pretok.c -- the pre-tokenizers of byte-level BPE (pretok.c),
 * one block per tokenizer.ggml.pre type, on strings that exercise each
 * regex's alternatives: contractions in both cases, digit groups, white
 * space runs before a word and at the end, line breaks, punctuation runs,
 * letters beyond ASCII, combining marks, CJK. Every expected split below
 * is worked out by hand from the regexes (quoted in pretok.c) and written
 * with '|' between the pieces; the comments give the reasoning where it is
 * not plain. */
#include "common/test_common.h"

#include "llama.h"
#include "unicode_class.h"

#include <stdlib.h>
#include <string.h>

static void split(const char * pre_name, const char * text, const char * want) {
    const struct llama_pre * pre = llama_pre_find(pre_name);
    if (!CHECK(pre, "pre-tokenizer '%s' not found", pre_name)) return;
    const size_t len = strlen(text);
    size_t ends[128];
    if (!CHECK(len <= 128, "test text too long")) return;
    const size_t n = llama_pre_split(pre, text, len, ends);
    char got[512] = "";
    bool ok = n != (size_t) -1 && (n == 0 || ends[n - 1] == len);
    for (size_t i = 0, from = 0; ok && i < n; from = ends[i++]) {
        ok = ends[i] > from;  /* pieces are not empty and ascend */
        if (i) strcat(got, "|");
        strncat(got, text + from, ends[i] - from);
    }
    CHECK(ok && strcmp(got, want) == 0, "%s split '%s': '%s', expected '%s'", pre_name, text, got, want);
}

/* 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ */
static void test_gpt2(void) {
    split("gpt-2", "it's 42 apples!!  ok", "it|'s| 42| apples|!!| | ok");
    split("gpt-2", "hello\n\nworld", "hello|\n|\n|world");  /* \s+(?!\S) leaves the last \n; alone, \s+ */
    split("gpt-2", "a  ", "a|  ");                          /* at the end (?!\S) holds: the whole run */
    split("gpt-2", "x'll 'S", "x|'ll| '|S");                /* lower case only: " '" is punctuation */
    split("gpt-2", "I'M they've 'd", "I|'|M| they|'ve| '|d");
    split("gpt-2", "x's x't x're x've x'm x'll x'd x'S x'T x'RE", "x|'s| x|'t| x|'re| x|'ve| x|'m| x|'ll| x|'d| x|'|S| x|'|T| x|'|RE");
    split("gpt-2", "caf\xc3\xa9 3\xc2\xbd", "caf\xc3\xa9| 3\xc2\xbd");  /* é a letter, ½ (No) a number */
    split("gpt-2", "cafe\xcc\x81s", "cafe|\xcc\x81|s");               /* U+0301, a mark: not a letter */
    split("gpt-2", "a\xc2\xa0" "b", "a|\xc2\xa0|b");                  /* NBSP is \s, and " ?" is ASCII space only */
    split("gpt-2", "\tword", "\t|word");
    split("gpt-2", "", "");
}

/* llama3: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+ */
static void test_llama3(void) {
    split("llama-bpe", "I'M here, they'Re 12345 ok", "I|'M| here|,| they|'Re| |123|45| ok");
    split("llama3", "1234567", "123|456|7");
    /* every contraction, lower and upper case (and mixed: 'rE) */
    split("llama3", "x's x't x're x've x'm x'll x'd X'S X'T X'RE X'VE X'M X'LL X'D x'rE",
          "x|'s| x|'t| x|'re| x|'ve| x|'m| x|'ll| x|'d| X|'S| X|'T| X|'RE| X|'VE| X|'M| X|'LL| X|'D| x|'rE");
    split("llama3", "we'LL 'd 've", "we|'LL| '|d| '|ve");  /* after a space: " '" is punctuation, then the letters */
    split("llama3", "a\n\n  b", "a|\n\n| | b");         /* \s*[\r\n]+ ends at the last \n; then \s+(?!\S), then " b" */
    split("llama3", "ok!!\n\nyes", "ok|!!\n\n|yes");     /* punctuation takes the line breaks after it */
    split("llama3", "$abc\tword $100", "$abc|\tword| $|100");  /* one character of any other class before letters */
    split("llama3", "  hello", " | hello");
    split("llama3", "hello world  \n", "hello| world|  \n");
    split("llama3", "F\xc3\xbchrer \xe6\x9d\xb1\xe4\xba\xac", "F\xc3\xbchrer| \xe6\x9d\xb1\xe4\xba\xac");  /* Führer 東京 */
    split("llama3", "cafe\xcc\x81!", "cafe|\xcc\x81!");                                                    /* the mark is punctuation here */
    split("llama3", "\xd9\xa3\xd9\xa4\xd9\xa5\xd9\xa6", "\xd9\xa3\xd9\xa4\xd9\xa5|\xd9\xa6");             /* Arabic-Indic digits, in threes */
    split("llama3", "\n", "\n");
    split("glm4", "I'M 1234", "I|'M| |123|4");  /* chatglm-bpe, glm4: llama3's regex */
}

/* qwen2: llama3 with \p{N} one at a time */
static void test_qwen2(void) {
    split("qwen2", "I'M 42", "I|'M| |4|2");
    split("qwen2", "x=12;\r\ny", "x|=|1|2|;\r\n|y");
    split("qwen2", " 's 'S", " '|s| '|S");  /* no contraction after a space: ' ' + "'" is punctuation, then the letter */
}

/* qwen35: qwen2 with marks in words: [^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+ and [^\s\p{L}\p{M}\p{N}] */
static void test_qwen35(void) {
    split("qwen35", "cafe\xcc\x81s! x12", "cafe\xcc\x81s|!| x|1|2");
    split("qwen35", "a \xcc\x81x", "a| \xcc\x81x");  /* the space, then a mark and a letter: one word */
    split("qwen2", "cafe\xcc\x81s", "cafe|\xcc\x81s");   /* qwen2: the mark starts the next word */
}

/* seed-coder: qwen2's without [\r\n]* after punctuation; bailingmoe: qwen2's (\s*[\r\n] ends where \s*[\r\n]+ does) */
static void test_seed_bailing(void) {
    split("seed-coder", "ok!!\n\nyes", "ok|!!|\n\n|yes");
    split("bailingmoe", "I'M 42!!\n\n", "I|'M| |4|2|!!\n\n");
}

/* deepseek-v3: \p{N}{1,3}, [一-龥぀-ゟ゠-ヿ]+, then
 * [ASCII punctuation][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+ */
static void test_deepseek_v3(void) {
    /* digits out first (123|4), then 東京です (kanji and hiragana), then ".foo" (punctuation + ASCII letters) */
    split("deepseek-v3", "x.foo 1234 \xe6\x9d\xb1\xe4\xba\xac\xe3\x81\xa7\xe3\x81\x99 ok",
          "x|.foo| |123|4| |\xe6\x9d\xb1\xe4\xba\xac\xe3\x81\xa7\xe3\x81\x99| ok");
    split("hunyuan-dense", "$100 a+b", "$|100| a|+b");
}

/* gpt-4o: [^\r\n\p{L}\p{N}]?U*L+C?|[^\r\n\p{L}\p{N}]?U+L*C?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
 * with U a letter not in [a-z], L a letter not in [A-Z], C a contraction (any case) */
static void test_gpt4o(void) {
    split("gpt-4o", "HelloWorld", "Hello|World");
    split("gpt-4o", "HELLO world", "HELLO| world");         /* U+ alone: the second alternative */
    split("gpt-4o", "don't DON'T I'm", "don't| DON'T| I'm"); /* the contraction joins the word */
    split("gpt-4o", "we're WE'RE we'Ll x'd", "we're| WE'RE| we'Ll| x'd");
    split("gpt-4o", "1234567", "123|456|7");
    split("gpt-4o", "x!/\n/y", "x|!/\n/|y");                 /* punctuation takes [\r\n/]* after it */
    split("gpt-4o", "Stra\xc3\x9f" "e", "Stra\xc3\x9f" "e"); /* ß counts as lower */
    /* beyond ASCII a letter is both U and L: U* takes ÄBC, then gives back down to Ä, the last that is also L */
    split("gpt-4o", "\xc3\x84" "BC", "\xc3\x84|BC");
    split("gpt-4o", "e\xcc\x81x", "e|\xcc\x81x");            /* a mark is no letter: it starts the next word */
    split("gpt-4o", "\n\nHi", "\n\n|Hi");
    split("llama4", "'s", "'s");
}

/* tekken: gpt-4o without contractions, \p{N} one at a time */
static void test_tekken(void) { split("tekken", "HelloWorld 2024's", "Hello|World| |2|0|2|4|'s"); }

/* deepseek-llm: [\r\n], \s?[cased letters]+, \s?[!-/:-~！-／：-～‘-‟　-。]+, \s+$, [一-龥ࠀ-一가-퟿]+, \p{N}+, one after another */
static void test_deepseek_llm(void) {
    /* [\r\n] cuts out the \n; letters: Hello, " world", " ok"; the ASCII run (which has the letters) keeps them;
     * \s+$ the trailing spaces; 東京 (CJK) out of "42 東京"; then \p{N}+ out of "42 " */
    split("deepseek-llm", "Hello, world!\n42 \xe6\x9d\xb1\xe4\xba\xac ok  ", "Hello|,| world|!|\n|42| |\xe6\x9d\xb1\xe4\xba\xac| ok|  ");
    /* U+3000 (ideographic space) is \s, so the CJK range (which spans it) does not take it */
    split("deepseek-llm", "a\xe3\x80\x80" "b", "a|\xe3\x80\x80" "b");
    split("deepseek-llm", "\xd0\x9f\xd1\x80\xd0\xb8 123456", "\xd0\x9f\xd1\x80\xd0\xb8| |123456");  /* Cyrillic letters; \p{N}+ whole */
}

/* deepseek-coder: [\r\n], \s?\p{L}+, \s?\p{P}+, [一-龥ࠀ-一가-퟿]+, \p{N} */
static void test_deepseek_coder(void) {
    split("deepseek-coder", "x = foo(42);\n", "x| =| foo|(|4|2|);|\n");  /* '=' is a symbol, not \p{P} */
}

/* falcon: [\p{P}\$\+<=>\^~\|`]+, then GPT-2's, then [0-9][0-9][0-9] */
static void test_falcon(void) {
    split("falcon", "a+=b's 12345!", "a|+=|b|'|s| |123|45|!");  /* the first regex takes the apostrophe away from 's */
}

/* starcoder (and smollm, refact, ...): \p{N}, then GPT-2's */
static void test_starcoder(void) {
    split("starcoder", "x 42's", "x| |4|2|'s");
    split("smollm", "v2.10", "v|2|.|1|0");
}

/* llama.cpp's default (no tokenizer.ggml.pre): [\p{P}\$\+<=>\^~\|]+, GPT-2's, \p{N}+, [0-9][0-9][0-9] */
static void test_default(void) {
    split("default", "x`=1234", "x|`|=|123|4");  /* the backtick is not in the first class */
    split("gpt2", "it's 42", "it|'|s| |42");  /* the apostrophe is \p{P}: cut out first */
}

/* bloom:  ?[^(\s|.,!?…。，、।۔،)]+ ; viking: that, then \p{N} */
static void test_bloom(void) {
    split("bloom", "Hello, world... (ok)", "Hello|,| world|... (|ok|)");  /* text no match covers is one piece */
    split("viking", "ab12 c", "ab|1|2| c");
}

/* the generated class table at code points whose category UnicodeData.txt gives
 * (in the comments), and White_Space */
static void test_classes(void) {
    static const struct { uint32_t cp; enum uc_class want; } cases[] = {
        {0x41, UC_LETTER} /* Lu */, {0x7a, UC_LETTER} /* Ll */, {0x4e00, UC_LETTER} /* Lo */, {0xac00, UC_LETTER} /* Lo */,
        {0x30, UC_NUMBER} /* Nd */, {0x663, UC_NUMBER} /* Nd */, {0xbd, UC_NUMBER} /* No */, {0x2167, UC_NUMBER} /* Nl */,
        {0x1d7ce, UC_NUMBER} /* Nd */, {0x301, UC_MARK} /* Mn */, {0x93f, UC_MARK} /* Mc */, {0x20ac, UC_SYMBOL} /* Sc */,
        {0x2b, UC_SYMBOL} /* Sm */, {0x1f999, UC_SYMBOL} /* So */, {0x21, UC_PUNCT} /* Po */, {0x5f, UC_PUNCT} /* Pc */,
        {0x3002, UC_PUNCT} /* Po */, {0x20, UC_SEPARATOR} /* Zs */, {0x3000, UC_SEPARATOR} /* Zs */, {0x2028, UC_SEPARATOR} /* Zl */,
        {0x9, UC_OTHER} /* Cc */, {0xad, UC_OTHER} /* Cf */, {0xe000, UC_OTHER} /* Co */, {0x378, UC_UNASSIGNED} /* Cn */,
        {0x10ffff, UC_UNASSIGNED} /* Cn */, {0x110000, UC_UNASSIGNED} /* beyond Unicode */,
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        CHECK(uc_class(cases[k].cp) == cases[k].want, "class of U+%04X: %d, expected %d", (unsigned) cases[k].cp, (int) uc_class(cases[k].cp),
              (int) cases[k].want);
    CHECK(uc_space(' ') && uc_space('\t') && uc_space(0x0b) && uc_space(0x85) && uc_space(0xa0) && uc_space(0x3000) && uc_space(0x2029) &&
          !uc_space(0x1c) && !uc_space(0x200b) && !uc_space('a'), "White_Space");
}

int main(void) {
    test_classes();
    test_gpt2();
    test_llama3();
    test_qwen2();
    test_qwen35();
    test_seed_bailing();
    test_deepseek_v3();
    test_gpt4o();
    test_tekken();
    test_deepseek_llm();
    test_deepseek_coder();
    test_falcon();
    test_starcoder();
    test_default();
    test_bloom();
    CHECK(llama_pre_find("no-such-type") == NULL, "an unknown pre-tokenizer found");
    return tc_finish("test_llama_pretok");
}
