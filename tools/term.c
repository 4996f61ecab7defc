/* term.c — colour and safe text for terminals (see term.h). */
#include "term.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

bool term_colour_enabled(FILE *out)
{
    const char *no_colour = getenv("NO_COLOR");
    const char *term = getenv("TERM");
    if (no_colour && no_colour[0] != '\0')
        return false;
    if (term && strcmp(term, "dumb") == 0)
        return false;
    return isatty(fileno(out)) == 1;
}

term_style term_style_for(FILE *out)
{
    static const term_style colour = {"\033[1m", "\033[2m", "\033[31m", "\033[32m", "\033[33m", "\033[0m"};
    static const term_style plain = {"", "", "", "", "", ""};
    return term_colour_enabled(out) ? colour : plain;
}

/* Longest form escape_one writes: "\xc2\x9b" and its NUL. */
#define FORM_SIZE 9

/*
 * The terminal-safe form of the character at `c` (`left` > 0 bytes remain
 * before the end or the byte limit): NUL-terminated into `form`.
 * @return how many source bytes it stands for (1, or 2 for a C1 control).
 */
static size_t escape_one(const unsigned char *c, size_t left, unsigned flags, char form[FORM_SIZE])
{
    static const char hex[] = "0123456789abcdef";
    switch (c[0]) {
    case '\n': strcpy(form, "\\n"); return 1;
    case '\t': strcpy(form, "\\t"); return 1;
    case '\r': strcpy(form, "\\r"); return 1;
    case '"':
    case '\\':
        form[0] = '\\';
        form[1] = (char)c[0];
        form[2] = '\0';
        if (!(flags & TERM_QUOTED))
            memmove(form, form + 1, 2);
        return 1;
    default: break;
    }
    if (c[0] < 0x20 || c[0] == 0x7f) {
        form[0] = '\\';
        form[1] = 'x';
        form[2] = hex[c[0] >> 4];
        form[3] = hex[c[0] & 15];
        form[4] = '\0';
        return 1;
    }
    if (c[0] == 0xc2 && left >= 2 && c[1] >= 0x80 && c[1] <= 0x9f) {
        memcpy(form, "\\xc2\\x", 6);
        form[6] = hex[c[1] >> 4];
        form[7] = hex[c[1] & 15];
        form[8] = '\0';
        return 2;
    }
    form[0] = (char)c[0];
    form[1] = '\0';
    return 1;
}

/* The escaped form of `text`, into `dest` when it is not NULL.
 * @return its length in bytes. */
static size_t escape_into(char *dest, const char *text, size_t max_bytes, unsigned flags)
{
    const unsigned char *c = (const unsigned char *)text;
    size_t length = 0;
    for (size_t at = 0; at < max_bytes && c[at];) {
        char form[FORM_SIZE];
        /* A C1 pair is only recognised whole; the byte limit is checked
         * first because a %.*s argument need not be NUL-terminated. */
        size_t left = at + 1 < max_bytes && c[at + 1] ? 2 : 1;
        at += escape_one(c + at, left, flags, form);
        size_t n = strlen(form);
        if (dest)
            memcpy(dest + length, form, n);
        length += n;
    }
    if (dest)
        dest[length] = '\0';
    return length;
}

size_t term_escape(FILE *out, const char *text, size_t max_bytes, unsigned flags)
{
    const unsigned char *c = (const unsigned char *)text;
    size_t written = 0;
    for (size_t at = 0; at < max_bytes && c[at];) {
        char form[FORM_SIZE];
        size_t left = at + 1 < max_bytes && c[at + 1] ? 2 : 1;
        at += escape_one(c + at, left, flags, form);
        fputs(form, out);
        written += strlen(form);
    }
    return written;
}

char *term_escape_dup(const char *text, unsigned flags)
{
    size_t length = escape_into(NULL, text, SIZE_MAX, flags);
    char *copy = malloc(length + 1);
    if (copy)
        escape_into(copy, text, SIZE_MAX, flags);
    return copy;
}

void term_quoted(FILE *out, const char *text)
{
    fputc('"', out);
    term_escape(out, text, SIZE_MAX, TERM_QUOTED);
    fputc('"', out);
}

void term_plain(FILE *out, const char *text)
{
    term_escape(out, text, SIZE_MAX, 0);
}

static void pad(FILE *out, size_t n)
{
    while (n--)
        fputc(' ', out);
}

/* A string argument: escaped, cut to `precision` source bytes, padded to `width`. */
static void put_string(FILE *out, const char *text, long width, long precision, bool left)
{
    size_t max = precision >= 0 ? (size_t)precision : SIZE_MAX;
    size_t length = escape_into(NULL, text, max, 0);
    size_t gap = width > 0 && (size_t)width > length ? (size_t)width - length : 0;
    if (!left)
        pad(out, gap);
    term_escape(out, text, max, 0);
    if (left)
        pad(out, gap);
}

/* One conversion specification being rebuilt for fprintf: '%', flags,
 * width and precision as numbers (a '*' resolved), length, conversion. */
typedef struct spec_text {
    char text[64];
    size_t size;
} spec_text;

static void spec_add(spec_text *s, char c)
{
    if (s->size + 1 < sizeof s->text) {
        s->text[s->size++] = c;
        s->text[s->size] = '\0';
    }
}

static void spec_number(spec_text *s, long value)
{
    char digits[24];
    snprintf(digits, sizeof digits, "%ld", value);
    for (const char *d = digits; *d; d++)
        spec_add(s, *d);
}

static long read_number(const char **p)
{
    long value = 0;
    while (isdigit((unsigned char)**p)) {
        if (value < 100000)
            value = value * 10 + (**p - '0');
        (*p)++;
    }
    return value;
}

/* Format one number argument with the rebuilt specification `s`. The
 * length modifier decides the argument's type, as in fprintf. */
static void put_number(FILE *out, const char *s, const char *length, char conversion, va_list *ap)
{
    bool is_signed = conversion == 'd' || conversion == 'i';
    if (strchr("eEfFgGaA", conversion)) {
        if (strcmp(length, "L") == 0)
            fprintf(out, s, va_arg(*ap, long double));
        else
            fprintf(out, s, va_arg(*ap, double));
    } else if (conversion == 'p') {
        fprintf(out, s, va_arg(*ap, void *));
    } else if (strcmp(length, "ll") == 0) {
        if (is_signed)
            fprintf(out, s, va_arg(*ap, long long));
        else
            fprintf(out, s, va_arg(*ap, unsigned long long));
    } else if (strcmp(length, "l") == 0) {
        if (is_signed)
            fprintf(out, s, va_arg(*ap, long));
        else
            fprintf(out, s, va_arg(*ap, unsigned long));
    } else if (strcmp(length, "z") == 0) {
        if (is_signed)
            fprintf(out, s, va_arg(*ap, ssize_t));
        else
            fprintf(out, s, va_arg(*ap, size_t));
    } else if (strcmp(length, "j") == 0) {
        if (is_signed)
            fprintf(out, s, va_arg(*ap, intmax_t));
        else
            fprintf(out, s, va_arg(*ap, uintmax_t));
    } else if (strcmp(length, "t") == 0) {
        fprintf(out, s, va_arg(*ap, ptrdiff_t));
    } else if (is_signed) {
        fprintf(out, s, va_arg(*ap, int)); /* none, h, hh: promoted to int */
    } else {
        fprintf(out, s, va_arg(*ap, unsigned int));
    }
}

void term_vprintf(FILE *out, const char *fmt, va_list args)
{
    va_list ap;
    va_copy(ap, args);
    for (const char *p = fmt; *p; p++) {
        if (*p != '%') {
            fputc(*p, out); /* the tool's own text */
            continue;
        }
        p++;
        if (*p == '%') {
            fputc('%', out);
            continue;
        }
        spec_text s = {"%", 1};
        bool left = false;
        long width = -1, precision = -1;
        for (; *p && strchr("-+ #0", *p); p++) {
            left = left || *p == '-';
            spec_add(&s, *p);
        }
        if (*p == '*') {
            int w = va_arg(ap, int);
            p++;
            left = left || w < 0;
            width = w < 0 ? -(long)w : w;
        } else if (isdigit((unsigned char)*p)) {
            width = read_number(&p);
        }
        if (*p == '.') {
            p++;
            if (*p == '*') {
                int q = va_arg(ap, int);
                p++;
                precision = q < 0 ? -1 : q;
            } else {
                precision = read_number(&p);
            }
        }
        char length[3] = "";
        size_t length_size = 0;
        while (*p && strchr("hlzjtL", *p) && length_size < 2)
            length[length_size++] = *p++;
        length[length_size] = '\0';
        char conversion = *p;
        if (!conversion)
            break;
        if (conversion == 's' || conversion == 'c') {
            char one[2] = {0, 0};
            const char *text;
            if (conversion == 'c') {
                one[0] = (char)va_arg(ap, int);
                text = one;
            } else {
                text = va_arg(ap, const char *);
            }
            put_string(out, text ? text : "(null)", width, precision, left);
            continue;
        }
        if (!strchr("diouxXeEfFgGaAp", conversion)) {
            /* %n and unknown conversions: the format attribute rejects
             * them at compile time; stop rather than guess the type. */
            break;
        }
        if (left && !strchr(s.text, '-'))
            spec_add(&s, '-'); /* from a negative '*' width */
        if (width >= 0)
            spec_number(&s, width);
        if (precision >= 0) {
            spec_add(&s, '.');
            spec_number(&s, precision);
        }
        for (const char *l = length; *l; l++)
            spec_add(&s, *l);
        spec_add(&s, conversion);
        put_number(out, s.text, length, conversion, &ap);
    }
    va_end(ap);
}

void term_printf(FILE *out, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    term_vprintf(out, fmt, args);
    va_end(args);
}
