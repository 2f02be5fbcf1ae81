/* pretok.c -- the pre-tokenizers of byte-level BPE. tokenizer.ggml.pre names
 * one of llama.cpp's pre-tokenizer types; each is a list of regexes that
 * split the text in turn: each regex splits every piece the previous ones
 * left, at its matches, and the text between two matches is a piece too
 * (as llama.cpp's unicode_regex_split does).
 *
 * There is no regex engine here: each regex is written out as a scanner
 * that, at a position of a piece, returns the end of the match the regex
 * would make there (alternatives tried left to right, quantifiers greedy,
 * with the backtracking the regex would do), or the position itself for no
 * match. The regexes are quoted above their scanners.
 *
 * Classes: \p{L} \p{N} \p{P} \p{M} by the Unicode general category
 * (unicode_class.c), \s by White_Space. Where llama.cpp's own matching
 * departs from the regex's text, we follow llama.cpp (its test vectors are
 * the reference): upper- and lower-case classes are [A-Z] and [a-z] plus
 * every letter beyond ASCII; in the regexes llama.cpp runs with its own code
 * (gpt2, llama3), an unassigned code point is none of the classes and each
 * character no alternative matches is a piece of its own; in literal
 * character ranges a white-space character beyond ASCII matches only \s. */
#include "tokenizer_impl.h"
#include "unicode_class.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the text as code points ---- */

enum { CL_CLASS = 7, CL_SPACE = 8 };  /* per code point: its uc_class, | CL_SPACE for White_Space */

/* One piece: the text's code points cp[], their classes cl[]; the piece ends before b. */
struct piece { const uint32_t * cp; const uint8_t * cl; size_t b; };

typedef bool (*cp_pred)(const struct piece * p, size_t i);

static bool in(const struct piece * p, size_t i) { return i < p->b; }
static enum uc_class cls(const struct piece * p, size_t i) { return (enum uc_class) (p->cl[i] & CL_CLASS); }
static bool letter(const struct piece * p, size_t i) { return in(p, i) && cls(p, i) == UC_LETTER; }
static bool number(const struct piece * p, size_t i) { return in(p, i) && cls(p, i) == UC_NUMBER; }
static bool space(const struct piece * p, size_t i) { return in(p, i) && (p->cl[i] & CL_SPACE); }
static bool cr_lf(const struct piece * p, size_t i) { return in(p, i) && (p->cp[i] == '\r' || p->cp[i] == '\n'); }
static bool ascii_digit(const struct piece * p, size_t i) { return in(p, i) && p->cp[i] >= '0' && p->cp[i] <= '9'; }
/* [^\s\p{L}\p{N}] */
static bool other(const struct piece * p, size_t i) { return in(p, i) && !space(p, i) && !letter(p, i) && !number(p, i); }
/* the same where llama.cpp gives unassigned code points no class at all */
static bool other_assigned(const struct piece * p, size_t i) { return other(p, i) && cls(p, i) != UC_UNASSIGNED; }
/* cased words (gpt-4o): [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] and [\p{Ll}\p{Lm}\p{Lo}\p{M}], as llama.cpp runs them:
 * a letter that is not [a-z], and a letter that is not [A-Z] */
static bool upper(const struct piece * p, size_t i) { return letter(p, i) && !(p->cp[i] >= 'a' && p->cp[i] <= 'z'); }
static bool lower(const struct piece * p, size_t i) { return letter(p, i) && !(p->cp[i] >= 'A' && p->cp[i] <= 'Z'); }

static bool ascii_in(const struct piece * p, size_t i, const char * set) { return in(p, i) && p->cp[i] && p->cp[i] < 0x80 && strchr(set, (int) p->cp[i]); }

static size_t run(const struct piece * p, size_t i, cp_pred pred) {
    while (pred(p, i)) i++;
    return i;
}

/* The code point a literal character range sees: white space beyond ASCII is only \s. */
static uint32_t literal(const struct piece * p, size_t i) { return !in(p, i) ? 0 : p->cp[i] >= 0x80 && space(p, i) ? 0x0b : p->cp[i]; }

struct cp_range { uint32_t lo, hi; };

static bool in_ranges(uint32_t c, const struct cp_range * r, size_t n) {
    for (size_t k = 0; k < n; k++)
        if (c >= r[k].lo && c <= r[k].hi) return true;
    return false;
}

/* ---- pieces of regexes several pre-tokenizers share ---- */

static bool is_ascii_lower(uint32_t c, char x) { return c == (uint32_t) x || c == (uint32_t) x - 32; }

/* 's|'t|'re|'ve|'m|'ll|'d (any_case: each letter in either case) at i: the end, or i */
static size_t contraction(const struct piece * p, size_t i, bool any_case) {
    if (!in(p, i) || p->cp[i] != '\'' || !in(p, i + 1)) return i;
    const uint32_t c1 = p->cp[i + 1], c2 = in(p, i + 2) ? p->cp[i + 2] : 0;
    #define IS(c, x) (any_case ? is_ascii_lower(c, x) : (c) == (uint32_t) (x))
    if (IS(c1, 's') || IS(c1, 't') || IS(c1, 'm') || IS(c1, 'd')) return i + 2;
    if ((IS(c1, 'r') && IS(c2, 'e')) || (IS(c1, 'v') && IS(c2, 'e')) || (IS(c1, 'l') && IS(c2, 'l'))) return i + 3;
    #undef IS
    return i;
}

/* \s*[\r\n]+ (when line_breaks) | \s+(?!\S) | \s+ at i. \s*[\r\n]+ ends after
 * the run's last line break; \s+(?!\S) leaves the run's last character to
 * the next piece when something other than white space follows. */
static size_t white_run(const struct piece * p, size_t i, bool line_breaks) {
    const size_t e = run(p, i, space);
    if (e == i) return i;
    if (line_breaks)
        for (size_t k = e; k > i; k--)
            if (cr_lf(p, k - 1)) return k;
    return e - i > 1 && in(p, e) ? e - 1 : e;
}

/* " ?" + a run of pred + [tail]*, where tail is a list of ASCII characters */
static size_t space_then_run(const struct piece * p, size_t i, cp_pred pred, const char * tail) {
    const size_t j = in(p, i) && p->cp[i] == ' ' && pred(p, i + 1) ? i + 1 : i;
    if (!pred(p, j)) return i;
    size_t e = run(p, j, pred);
    while (tail && ascii_in(p, e, tail)) e++;
    return e;
}

/* ---- the regexes ---- */

/* gpt2:  's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ */
static size_t re_gpt2(const struct piece * p, size_t i) {
    size_t e = contraction(p, i, false);
    if (e > i) return e;
    static const cp_pred runs[] = {letter, number, other_assigned};
    for (int k = 0; k < 3; k++)
        if ((e = space_then_run(p, i, runs[k], NULL)) > i) return e;
    return white_run(p, i, false);
}

/* \p{N}{1,digits}| ?[^\s\p{L}\p{N}]+[tail]*|\s*[\r\n]+|\s+(?!\S)|\s+ : how llama3's and gpt-4o's regexes end */
static size_t digits_punct_white(const struct piece * p, size_t i, size_t digits, cp_pred punct, const char * tail) {
    size_t e = i;
    if (number(p, i)) {
        while (e - i < digits && number(p, e)) e++;
        return e;
    }
    if ((e = space_then_run(p, i, punct, tail)) > i) return e;
    return white_run(p, i, true);
}

/* The regexes of the llama3 family:
 *   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?W+|\p{N}{1,digits}| ?[^\s\p{N}W]+[tail]*|\s*[\r\n]+|\s+(?!\S)|\s+
 * with W = word: \p{L} (qwen3.5: [\p{L}\p{M}]). */
struct words_rule { size_t digits; cp_pred word, punct; const char * tail; };

static size_t words(const struct piece * p, size_t i, const struct words_rule * r) {
    const size_t e = contraction(p, i, true);
    if (e > i) return e;
    /* a word character may be the optional first one too (a mark): the word then starts at i either way */
    if (r->word(p, i)) return run(p, i, r->word);
    if (!cr_lf(p, i) && !number(p, i) && !letter(p, i) && r->word(p, i + 1)) return run(p, i + 1, r->word);
    return digits_punct_white(p, i, r->digits, r->punct, r->tail);
}

static bool letter_or_mark(const struct piece * p, size_t i) { return letter(p, i) || (in(p, i) && cls(p, i) == UC_MARK); }
/* [^\s\p{L}\p{M}\p{N}] */
static bool other_no_mark(const struct piece * p, size_t i) { return other(p, i) && cls(p, i) != UC_MARK; }

static size_t re_llama3(const struct piece * p, size_t i) {
    static const struct words_rule r = {.digits = 3, .word = letter, .punct = other_assigned, .tail = "\r\n"};
    return words(p, i, &r);
}
static size_t re_qwen2(const struct piece * p, size_t i) {
    static const struct words_rule r = {.digits = 1, .word = letter, .punct = other, .tail = "\r\n"};
    return words(p, i, &r);
}
static size_t re_qwen35(const struct piece * p, size_t i) {
    static const struct words_rule r = {.digits = 1, .word = letter_or_mark, .punct = other_no_mark, .tail = "\r\n"};
    return words(p, i, &r);
}
/* seed-coder: qwen2's without the line breaks after punctuation */
static size_t re_seed_coder(const struct piece * p, size_t i) {
    static const struct words_rule r = {.digits = 1, .word = letter, .punct = other, .tail = NULL};
    return words(p, i, &r);
}

/* A cased word at s: [U]*[L]+ else [U]+[L]* (U = upper, L = lower). For the
 * first, the greedy U* gives back characters until a lower one follows. */
static size_t cased_word(const struct piece * p, size_t s) {
    const size_t j = run(p, s, upper);
    for (size_t k = j + 1; k-- > s;)
        if (lower(p, k)) return run(p, k, lower);
    return j > s ? run(p, j, lower) : s;
}

/* gpt-4o (digits 3, contractions) and tekken (digits 1, none):
 *   [^\r\n\p{L}\p{N}]?U*L+C?|[^\r\n\p{L}\p{N}]?U+L*C?|\p{N}{1,digits}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
 * with C = (?i:'s|'t|'re|'ve|'m|'ll|'d) */
static size_t cased_words(const struct piece * p, size_t i, size_t digits, bool contractions) {
    /* the optional first character is taken when it can be: without it a word cannot start at i */
    const size_t s = in(p, i) && !cr_lf(p, i) && !letter(p, i) && !number(p, i) ? i + 1 : i;
    size_t e = cased_word(p, s);
    if (e > s) return contractions ? contraction(p, e, true) : e;
    return digits_punct_white(p, i, digits, other, "\r\n/");
}
static size_t re_gpt4o(const struct piece * p, size_t i) { return cased_words(p, i, 3, true); }
static size_t re_tekken(const struct piece * p, size_t i) { return cased_words(p, i, 1, false); }

/* [\r\n] */
static size_t re_line_break(const struct piece * p, size_t i) { return cr_lf(p, i) ? i + 1 : i; }
/* \p{N} */
static size_t re_digit(const struct piece * p, size_t i) { return number(p, i) ? i + 1 : i; }
/* \p{N}+ */
static size_t re_digits(const struct piece * p, size_t i) { return run(p, i, number); }
/* [0-9][0-9][0-9] */
static size_t re_three_ascii_digits(const struct piece * p, size_t i) {
    return ascii_digit(p, i) && ascii_digit(p, i + 1) && ascii_digit(p, i + 2) ? i + 3 : i;
}
/* \s+$ */
static size_t re_trailing_space(const struct piece * p, size_t i) {
    const size_t e = run(p, i, space);
    return e > i && e == p->b ? e : i;
}

/* DeepSeek LLM's letters: the class of its second regex, \s?[A-Za-zµÀ-ÖØ-öø-ƺ...𞤀-𞥃]+
 * (its tokenizer.json, as llama.cpp's llama-vocab.cpp spells it), as
 * ranges: the cased letters (Lu Ll Lt) of an older Unicode. */
static const struct cp_range deepseek_letters[] = {
    {0x41, 0x5a}, {0x61, 0x7a}, {0xb5, 0xb5}, {0xc0, 0xd6}, {0xd8, 0xf6}, {0xf8, 0x1ba},
    {0x1bc, 0x1bf}, {0x1c4, 0x293}, {0x295, 0x2af}, {0x370, 0x373}, {0x376, 0x377}, {0x37b, 0x37d},
    {0x37f, 0x37f}, {0x386, 0x386}, {0x388, 0x38a}, {0x38c, 0x38c}, {0x38e, 0x3a1}, {0x3a3, 0x3f5},
    {0x3f7, 0x481}, {0x48a, 0x52f}, {0x531, 0x556}, {0x10a0, 0x10c5}, {0x13a0, 0x13f5}, {0x13f8, 0x13fd},
    {0x1c90, 0x1cba}, {0x1cbd, 0x1cbf}, {0x1d00, 0x1d2b}, {0x1d6b, 0x1d77}, {0x1d79, 0x1d9a}, {0x1e00, 0x1f15},
    {0x1f18, 0x1f1d}, {0x1f20, 0x1f45}, {0x1f48, 0x1f4d}, {0x1f50, 0x1f57}, {0x1f59, 0x1f59}, {0x1f5b, 0x1f5b},
    {0x1f5d, 0x1f5d}, {0x1f5f, 0x1f7d}, {0x1f80, 0x1fb4}, {0x1fb6, 0x1fbc}, {0x1fbe, 0x1fbe}, {0x1fc2, 0x1fc4},
    {0x1fc6, 0x1fcc}, {0x1fd0, 0x1fd3}, {0x1fd6, 0x1fdb}, {0x1fe0, 0x1fec}, {0x1ff2, 0x1ff4}, {0x1ff6, 0x1ffc},
    {0x2102, 0x2102}, {0x2107, 0x2107}, {0x210a, 0x2113}, {0x2115, 0x2115}, {0x2119, 0x211d}, {0x2124, 0x2124},
    {0x2126, 0x2126}, {0x2128, 0x2128}, {0x212a, 0x212d}, {0x212f, 0x2134}, {0x2139, 0x2139}, {0x213c, 0x213f},
    {0x2145, 0x2149}, {0x214e, 0x214e}, {0x2183, 0x2184}, {0x2c00, 0x2c7b}, {0x2c7e, 0x2ce4}, {0x2ceb, 0x2cee},
    {0x2cf2, 0x2cf3}, {0xa640, 0xa66d}, {0xa680, 0xa69b}, {0xa722, 0xa76f}, {0xa771, 0xa787}, {0xa78b, 0xa78e},
    {0xab70, 0xabbf}, {0xfb00, 0xfb06}, {0xfb13, 0xfb17}, {0xff21, 0xff3a}, {0xff41, 0xff5a}, {0x10400, 0x1044f},
    {0x104b0, 0x104d3}, {0x104d8, 0x104fb}, {0x10c80, 0x10cb2}, {0x10cc0, 0x10cf2}, {0x118a0, 0x118df}, {0x1e900, 0x1e943},
};
/* [!-/:-~！-／：-～‘-‟　-。] */
static const struct cp_range deepseek_punct[] = {{0x21, 0x2f}, {0x3a, 0x7e}, {0xff01, 0xff0f}, {0xff1a, 0xff5e}, {0x2018, 0x201f}, {0x3000, 0x3002}};
/* [一-龥ࠀ-一가-퟿]: CJK ideographs, everything from U+0800 up to them, Hangul */
static const struct cp_range deepseek_cjk[] = {{0x4e00, 0x9fa5}, {0x0800, 0x4e00}, {0xac00, 0xd7ff}};

#define RANGES(r) r, sizeof r / sizeof r[0]
static bool ds_letter(const struct piece * p, size_t i) { return in(p, i) && in_ranges(literal(p, i), RANGES(deepseek_letters)); }
static bool ds_punct(const struct piece * p, size_t i) { return in(p, i) && in_ranges(literal(p, i), RANGES(deepseek_punct)); }
static bool ds_cjk(const struct piece * p, size_t i) { return in(p, i) && in_ranges(literal(p, i), RANGES(deepseek_cjk)); }
static bool punct(const struct piece * p, size_t i) { return in(p, i) && cls(p, i) == UC_PUNCT; }

/* \s?X+ */
static size_t space_opt_run(const struct piece * p, size_t i, cp_pred pred) {
    const size_t j = space(p, i) && pred(p, i + 1) ? i + 1 : i;
    return pred(p, j) ? run(p, j, pred) : i;
}
static size_t re_ds_letters(const struct piece * p, size_t i) { return space_opt_run(p, i, ds_letter); }
static size_t re_ds_punct(const struct piece * p, size_t i) { return space_opt_run(p, i, ds_punct); }
static size_t re_cjk(const struct piece * p, size_t i) { return run(p, i, ds_cjk); }
/* \s?\p{L}+ and \s?\p{P}+ (deepseek-coder) */
static size_t re_space_letters(const struct piece * p, size_t i) { return space_opt_run(p, i, letter); }
static size_t re_space_punct(const struct piece * p, size_t i) { return space_opt_run(p, i, punct); }

/* the default's first: [\p{P}\$\+<=>\^~\|]+ */
static bool default_punct(const struct piece * p, size_t i) { return punct(p, i) || ascii_in(p, i, "$+<=>^~|"); }
static size_t re_default_punct(const struct piece * p, size_t i) { return run(p, i, default_punct); }
/* deepseek-v3: \p{N}{1,3}, then [一-龥぀-ゟ゠-ヿ]+ (CJK ideographs, hiragana, katakana), then
 *   [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+ */
static size_t re_three_digits(const struct piece * p, size_t i) {
    size_t e = i;
    while (e - i < 3 && number(p, e)) e++;
    return e;
}
static const struct cp_range kana_cjk[] = {{0x4e00, 0x9fa5}, {0x3040, 0x309f}, {0x30a0, 0x30ff}};
static bool kana_cjk_char(const struct piece * p, size_t i) { return in(p, i) && in_ranges(literal(p, i), RANGES(kana_cjk)); }
static size_t re_kana_cjk(const struct piece * p, size_t i) { return run(p, i, kana_cjk_char); }
static bool ascii_letter(const struct piece * p, size_t i) { return in(p, i) && ((p->cp[i] | 0x20) >= 'a' && (p->cp[i] | 0x20) <= 'z'); }
static bool ascii_punct(const struct piece * p, size_t i) { return in(p, i) && p->cp[i] > ' ' && p->cp[i] < 0x7f && !ascii_letter(p, i) && !ascii_digit(p, i); }
static bool punct_symbol(const struct piece * p, size_t i) { return in(p, i) && (cls(p, i) == UC_PUNCT || cls(p, i) == UC_SYMBOL); }
static size_t re_deepseek3(const struct piece * p, size_t i) {
    if (ascii_punct(p, i) && ascii_letter(p, i + 1)) return run(p, i + 1, ascii_letter);
    /* the optional first character (not a line break, letter, punctuation or symbol) is taken when letters or marks follow */
    if (in(p, i) && !cr_lf(p, i) && !letter(p, i) && !punct_symbol(p, i) && letter_or_mark(p, i + 1)) return run(p, i + 1, letter_or_mark);
    if (letter_or_mark(p, i)) return run(p, i, letter_or_mark);
    const size_t e = space_then_run(p, i, punct_symbol, "\r\n");
    return e > i ? e : white_run(p, i, true);
}

/* falcon's first: [\p{P}\$\+<=>\^~\|`]+ */
static bool falcon_punct(const struct piece * p, size_t i) { return punct(p, i) || ascii_in(p, i, "$+<=>^~|`"); }
static size_t re_falcon_punct(const struct piece * p, size_t i) { return run(p, i, falcon_punct); }

/* bloom:  ?[^(\s|.,!?…。，、।۔،)]+ */
static bool bloom_char(const struct piece * p, size_t i) {
    static const struct cp_range stops[] = {{'(', ')'}, {'|', '|'}, {'.', '.'}, {',', ','}, {'!', '!'}, {'?', '?'}, {0x2026, 0x2026},
                                            {0x3002, 0x3002}, {0xff0c, 0xff0c}, {0x3001, 0x3001}, {0x0964, 0x0964}, {0x06d4, 0x06d4}, {0x060c, 0x060c}};
    return in(p, i) && !space(p, i) && !in_ranges(p->cp[i], RANGES(stops));
}
static size_t re_bloom(const struct piece * p, size_t i) { return space_then_run(p, i, bloom_char, NULL); }

/* ---- the pre-tokenizer types ---- */

typedef size_t (*regex_fn)(const struct piece * p, size_t i);

/* One regex; single: each character no match covers is a piece of its own
 * (llama.cpp's own code for gpt2 and llama3), else a run of them is one. */
struct regex { regex_fn match; bool single; };

struct llama_pre {
    const char * name;              /* tokenizer.ggml.pre */
    const struct regex * regexes;
    int n_regexes;
    bool ignore_merges;             /* a piece that is a token is that token, unmerged */
    bool add_bos;                   /* BOS by default */
};

static const struct regex rx_default[] = {{re_default_punct, false}, {re_gpt2, true}, {re_digits, false}, {re_three_ascii_digits, false}};
static const struct regex rx_gpt2[] = {{re_gpt2, true}};
static const struct regex rx_llama3[] = {{re_llama3, true}};
static const struct regex rx_qwen2[] = {{re_qwen2, false}};
static const struct regex rx_qwen35[] = {{re_qwen35, false}};
static const struct regex rx_seed_coder[] = {{re_seed_coder, false}};
static const struct regex rx_deepseek3[] = {{re_three_digits, false}, {re_kana_cjk, false}, {re_deepseek3, false}};
static const struct regex rx_gpt4o[] = {{re_gpt4o, false}};
static const struct regex rx_tekken[] = {{re_tekken, false}};
static const struct regex rx_starcoder[] = {{re_digit, false}, {re_gpt2, true}};
static const struct regex rx_falcon[] = {{re_falcon_punct, false}, {re_gpt2, true}, {re_three_ascii_digits, false}};
static const struct regex rx_deepseek_llm[] = {{re_line_break, false}, {re_ds_letters, false}, {re_ds_punct, false},
                                               {re_trailing_space, false}, {re_cjk, false}, {re_digits, false}};
static const struct regex rx_deepseek_coder[] = {{re_line_break, false}, {re_space_letters, false}, {re_space_punct, false},
                                                 {re_cjk, false}, {re_digit, false}};
static const struct regex rx_bloom[] = {{re_bloom, false}};
static const struct regex rx_viking[] = {{re_bloom, false}, {re_digit, false}};

#define RX(r) r, (int) (sizeof r / sizeof r[0])
/* The names llama.cpp's llama-vocab.cpp gives each type, with its defaults
 * ("gpt2" is not one of them: llama.cpp gives it the default, as to a file without tokenizer.ggml.pre). */
static const struct llama_pre pre_types[] = {
    {"default", RX(rx_default), false, false}, {"gpt2", RX(rx_default), false, false},
    {"gpt-2", RX(rx_gpt2), false, false}, {"phi-2", RX(rx_gpt2), false, false},
    {"mpt", RX(rx_gpt2), false, false}, {"olmo", RX(rx_gpt2), false, false}, {"jais", RX(rx_gpt2), false, false},
    {"trillion", RX(rx_gpt2), false, false}, {"granite-docling", RX(rx_gpt2), false, false}, {"exaone4", RX(rx_gpt2), false, false},
    {"llama3", RX(rx_llama3), true, true}, {"llama-v3", RX(rx_llama3), true, true}, {"llama-bpe", RX(rx_llama3), true, true},
    {"falcon3", RX(rx_llama3), true, true}, {"falcon-h1", RX(rx_llama3), true, true}, {"pixtral", RX(rx_llama3), true, true},
    {"midm-2.0", RX(rx_llama3), true, true}, {"lfm2", RX(rx_llama3), true, true},
    {"dbrx", RX(rx_llama3), false, false}, {"smaug-bpe", RX(rx_llama3), false, false},
    {"glm4", RX(rx_llama3), false, false}, {"chatglm-bpe", RX(rx_llama3), false, false},
    {"qwen2", RX(rx_qwen2), false, false}, {"deepseek-r1-qwen", RX(rx_qwen2), false, false}, {"stablelm2", RX(rx_qwen2), false, false},
    {"megrez", RX(rx_qwen2), false, false}, {"hunyuan", RX(rx_qwen2), false, false}, {"grok-2", RX(rx_qwen2), false, false},
    {"kormo", RX(rx_qwen2), false, false}, {"f2llmv2", RX(rx_qwen2), false, false},
    {"bailingmoe", RX(rx_qwen2), false, false}, {"bailingmoe2", RX(rx_qwen2), false, false}, {"llada-moe", RX(rx_qwen2), false, false},
    {"qwen35", RX(rx_qwen35), false, false}, {"seed-coder", RX(rx_seed_coder), false, false},
    {"deepseek-v3", RX(rx_deepseek3), false, false}, {"hunyuan-dense", RX(rx_deepseek3), false, false},
    {"deepseek-llm", RX(rx_deepseek_llm), false, false}, {"deepseek-coder", RX(rx_deepseek_coder), false, false},
    {"falcon", RX(rx_falcon), false, false},
    {"starcoder", RX(rx_starcoder), false, false}, {"refact", RX(rx_starcoder), false, false}, {"command-r", RX(rx_starcoder), false, false},
    {"smollm", RX(rx_starcoder), false, false}, {"codeshell", RX(rx_starcoder), false, false}, {"exaone", RX(rx_starcoder), false, false},
    {"minerva-7b", RX(rx_starcoder), false, false},
    {"gpt-4o", RX(rx_gpt4o), false, false}, {"llama4", RX(rx_gpt4o), false, false}, {"minimax-m2", RX(rx_gpt4o), false, false},
    {"tekken", RX(rx_tekken), true, true},
    {"bloom", RX(rx_bloom), false, false}, {"gpt3-finnish", RX(rx_bloom), false, false}, {"poro-chat", RX(rx_bloom), false, false},
    {"viking", RX(rx_viking), false, false},
};

const struct llama_pre * llama_pre_find(const char * name) {
    for (size_t k = 0; k < sizeof pre_types / sizeof pre_types[0]; k++)
        if (strcmp(pre_types[k].name, name) == 0) return &pre_types[k];
    return NULL;
}

bool llama_pre_ignore_merges(const struct llama_pre * pre) { return pre->ignore_merges; }
bool llama_pre_add_bos(const struct llama_pre * pre) { return pre->add_bos; }

void llama_pre_list(char * buf, size_t cap) {
    size_t n = 0;
    buf[0] = 0;
    for (size_t k = 0; k < sizeof pre_types / sizeof pre_types[0] && n < cap; k++)
        n += (size_t) snprintf(buf + n, cap - n, "%s%s", k ? ", " : "", pre_types[k].name);
}

/* ---- splitting ---- */

/* The code point at s[i] and its length; a byte that does not start valid UTF-8 is U+FFFD, one byte long. */
static uint32_t decode(const char * s, size_t n, size_t i, size_t * len) {
    const unsigned char c = (unsigned char) s[i];
    const size_t l = tok_utf8_len(c);
    *len = 1;
    if (l == 1) return c < 0x80 ? c : 0xfffd;
    if (l > n - i || c >= 0xf8) return 0xfffd;
    uint32_t cp = c & (0x7f >> l);
    for (size_t k = 1; k < l; k++) {
        if (((unsigned char) s[i + k] & 0xc0) != 0x80) return 0xfffd;
        cp = (cp << 6) | ((unsigned char) s[i + k] & 0x3f);
    }
    *len = l;
    return cp;
}

/* One regex over the pieces ending at in_ends[0..n_in) (code point indices): the new ends. */
static size_t split_by(const struct regex * rx, const uint32_t * cp, const uint8_t * cl, const size_t * in_ends, size_t n_in, size_t * out) {
    size_t n = 0;
    for (size_t k = 0, a = 0; k < n_in; a = in_ends[k++]) {
        const struct piece p = {.cp = cp, .cl = cl, .b = in_ends[k]};
        size_t gap = a;  /* the start of the characters no match has covered */
        for (size_t i = a; i < p.b;) {
            const size_t e = rx->match(&p, i);
            if (e > i) {
                if (gap < i) out[n++] = i;
                out[n++] = e;
                i = gap = e;
            } else {
                i++;
                if (rx->single) out[n++] = gap = i;
            }
        }
        if (gap < p.b) out[n++] = p.b;
    }
    return n;
}

size_t llama_pre_split(const struct llama_pre * pre, const char * text, size_t len, size_t * ends) {
    if (len == 0) return 0;
    uint32_t * cp = malloc(len * sizeof *cp);
    uint8_t * cl = malloc(len);
    size_t * at = malloc((len + 1) * sizeof *at);  /* byte offset of each code point */
    size_t * other_ends = malloc(len * sizeof *other_ends);
    size_t n = 0, np = (size_t) -1;
    if (cp && cl && at && other_ends) {
        for (size_t i = 0, l; i < len; i += l, n++) {
            at[n] = i;
            cp[n] = decode(text, len, i, &l);
            cl[n] = (uint8_t) (uc_class(cp[n]) | (uc_space(cp[n]) ? CL_SPACE : 0));
        }
        at[n] = len;
        /* the ends alternate between the two buffers, the last regex's in ends */
        size_t * bufs[2] = {pre->n_regexes % 2 ? other_ends : ends, pre->n_regexes % 2 ? ends : other_ends};
        bufs[0][0] = n;
        np = 1;
        for (int r = 0; r < pre->n_regexes; r++) np = split_by(&pre->regexes[r], cp, cl, bufs[r % 2], np, bufs[(r + 1) % 2]);
        for (size_t k = 0; k < np; k++) ends[k] = at[ends[k]];
    }
    free(cp); free(cl); free(at); free(other_ends);
    return np;
}
