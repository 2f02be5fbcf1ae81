/* unicode_class.h -- what the pre-tokenizers need to know of a code point:
 * its general category, reduced to the classes the regexes name (\p{L},
 * \p{N}, \p{P}, \p{M}, \p{S}), and whether it is white space. */
#ifndef LLAMA_UNICODE_CLASS_H
#define LLAMA_UNICODE_CLASS_H

#include <stdbool.h>
#include <stdint.h>

enum uc_class {
    UC_UNASSIGNED,  /* Cn */
    UC_LETTER,      /* Lu Ll Lt Lm Lo */
    UC_NUMBER,      /* Nd Nl No */
    UC_PUNCT,       /* Pc Pd Ps Pe Pi Pf Po */
    UC_MARK,        /* Mn Mc Me */
    UC_SYMBOL,      /* Sm Sc Sk So */
    UC_SEPARATOR,   /* Zs Zl Zp */
    UC_OTHER,       /* Cc Cf Cs Co */
};

/* The class of cp (unicode_class.c, generated). */
enum uc_class uc_class(uint32_t cp);

/* Unicode's White_Space property (PropList.txt): what \s matches. */
static inline bool uc_space(uint32_t cp) {
    return (cp >= 9 && cp <= 13) || cp == ' ' || cp == 0x85 || cp == 0xa0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 ||
           cp == 0x2029 || cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

#endif
