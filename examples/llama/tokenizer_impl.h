/* tokenizer_impl.h -- what the tokenizer's files share: token lookup, the
 * output list, and the merge loop both BPE flavours run (tokenizer.c,
 * merge.c, spm.c, bpe.c). Not part of the example's API. */
#ifndef LLAMA_TOKENIZER_IMPL_H
#define LLAMA_TOKENIZER_IMPL_H

#include "llama.h"

#include <stddef.h>

/* SentencePiece's token types, as llama.cpp stores them */
enum { TOK_NORMAL = 1, TOK_UNKNOWN = 2, TOK_CONTROL = 3, TOK_USER = 4, TOK_UNUSED = 5, TOK_BYTE = 6 };

uint32_t tok_hash(const char * s, size_t n);
/* The id of the token whose text is s[0..n), or -1. */
int tok_find(const struct llama_vocab * v, const char * s, size_t n);
/* The rank of the merge "a b" (a = s[0..na), b = s[na..na+nb)), or -1. */
int tok_merge_rank(const struct llama_vocab * v, const char * s, size_t na, size_t nb);

struct tok_out { int32_t * ids; int n, cap; };
bool tok_push(struct tok_out * o, int32_t id);

size_t tok_utf8_len(unsigned char c);

/* Symbols as a linked list over a string. */
struct tok_sym { size_t start, size, prev, next; };
#define TOK_NONE ((size_t) -1)

/* The score of merging s[a..a+na) with the next na+..nb bytes, or false. */
typedef bool (*tok_pair_fn)(const struct llama_vocab * v, const char * s, size_t a, size_t na, size_t nb, float * score);

/* Splits s[0..n) into one symbol per UTF-8 character (*ns of them, in y,
 * which holds n), then merges the adjacent pair of highest score, the
 * leftmost on ties, until no pair scores. false: out of memory. */
bool tok_merge(const struct llama_vocab * v, const char * s, size_t n, struct tok_sym * y, size_t * ns, tok_pair_fn pair);

/* One piece of plain text (no special tokens) of each flavour. */
bool tok_spm(const struct llama_vocab * v, const char * text, size_t len, bool prefix, struct tok_out * o);
bool tok_bpe(const struct llama_vocab * v, const char * text, size_t len, struct tok_out * o);
/* The pre-tokenizer's defaults; the names of all, comma-separated (for a message). */
bool llama_pre_ignore_merges(const struct llama_pre * pre);
bool llama_pre_add_bos(const struct llama_pre * pre);
void llama_pre_list(char * buf, size_t cap);

/* GPT-2's byte-to-character map (printable bytes stay, the others move to U+0100..): the character of byte b, and back. */
unsigned tok_byte_char(unsigned char b);
int tok_char_byte(unsigned cp);  /* -1 for a character no byte maps to */

#endif
