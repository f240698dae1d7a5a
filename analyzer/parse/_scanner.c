/* The compiled line scanner of the parse stage: one pass over a chunk's bytes.
 *
 * It splits a chunk into lines, puts each line in its family by the tests of
 * `analyzer.parse.families.split_families`, in their order and with the header region carried from
 * line to line, parses the canonical spellings of the hot shapes (krs stamps, bare and ISO ADR stamps,
 * event-16410 messages, 10046 WAIT lines) into Arrow arrays, counts the ignored lines, and hands
 * every other line back with its number and family to the Python fast paths and the grammars. A
 * line with a byte >= 0x80 always goes back (the reader counts the undecodable bytes in its text);
 * a chunk with a line over MAX_LINE bytes is declined whole (the pure path cuts such lines).
 *
 * Every shape accepted here is a strict subset of what the fast path accepts (analyzer.parse.fastpath),
 * with the same fields; tests/parse/test_scanner.py compares both on every line shape.
 *
 * Safety against hostile bytes: a line is a (pointer, length) pair and each read goes through `Cur`,
 * whose every step checks the length before it reads; numbers of more than 18 digits are never
 * converted (the line goes back); output buffers grow by doubling with overflow checks; the scan
 * runs without the GIL and touches no Python object while it does.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_scanner_arrow.h"

/* the family codes (analyzer.parse.families.FAMILIES; a test compares them with FAMILY_NAME) */
enum { F_TRANSPORT, F_STAMPS, F_WAIT, F_LGWR, F_HEADER, F_BLANK, F_10046, F_OTHER, F_SEPARATOR };
static const char *const FAMILY_NAME[] = {"transport",     "stamps",        "wait",          "lgwr",
                                          "header",        "ignored:blank", "ignored:10046", "ignored:other",
                                          "ignored:separator", NULL};

#ifndef SCANNER_SOURCES /* the sha256 of the sources (setup.py), or nothing known */
#define SCANNER_SOURCES ""
#endif

#define MAX_LINE 65536                /* analyzer.parse.lines.MAX_LINE_CHARS */
#define MAX_DIGITS 18                 /* a longer number may not fit an Int64: the grammar decides */
#define MAX_MICROS (INT64_C(1) << 53) /* analyzer.parse.records.MAX_MICROS */
#define MAX_OFFSET_MIN (14 * 60)      /* analyzer.parse.records.MAX_OFFSET_MIN */

/* analyzer.parse.families.OTHER_10046_PREFIXES, grammar.LGWR_PREFIXES and grammar.MESSAGE_PREFIXES */
static const char *const OTHER_10046[] = {
    "PARSING IN CURSOR", "END OF STMT", "PARSE #",      "EXEC #",        "FETCH #",     "CLOSE #",
    "STAT #",            "BINDS #",     "ERROR #",      "XCTEND ",       "=====",       " Bind#",
    "  oacdty",          "  oacflg",    "  kxsbbbfp",   "  value=",      "  No oacdef", "PARSE ERROR #",
    "UNMAP #",           "RPC ",        "LOBREAD:",     "LOBWRITE:",     "LOBAPPEND:",  "LOBGETLEN:",
    "LOBPGSIZE:",        "LOBTMPCREATE:", "LOBTMPFREE:", "LOBARRREAD:",  "LOBARRWRITE:", "LOBARRTMPFRE:",
    NULL};
static const char *const LGWR[] = {"Warning: log write ", "kcrfw_alfs_update_mode:", "Log file sync switching to ",
                                   NULL};
static const char *const MESSAGE_TEXT[] = {"Client sending SQLNET request data", "Client received SQLNET call",
                                           "Server received SQLNET data", "Server finished processing SQLNET data",
                                           NULL};
/* analyzer.base.vocab.MessageKind, in the order of MESSAGE_TEXT */
static const char *const MESSAGE_KIND[] = {"client_send", "client_recv", "server_recv", "server_done", NULL};

/* ------------------------------------------------------------------ bounded reading */
typedef struct {
    const unsigned char *p, *e;
} Cur;

SCANNER_INLINE int left(const Cur *c) { return c->p < c->e; }
SCANNER_INLINE int at_end(const Cur *c) { return c->p == c->e; }
SCANNER_INLINE int next_is(const Cur *c, unsigned char ch) { return c->p < c->e && *c->p == ch; }

SCANNER_INLINE int lit(Cur *c, const char *s, size_t n) {
    if ((size_t)(c->e - c->p) < n || memcmp(c->p, s, n) != 0) return 0;
    c->p += n;
    return 1;
}
#define LIT(c, s) lit((c), (s), sizeof(s) - 1)

SCANNER_INLINE int is_digit(unsigned char ch) { return ch >= '0' && ch <= '9'; }
SCANNER_INLINE int is_hex(unsigned char ch) {
    return is_digit(ch) || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}
SCANNER_INLINE int is_word(unsigned char ch) {
    return is_digit(ch) || (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || ch == '_';
}

/* `[0-9]+` of at most MAX_DIGITS digits */
static int number(Cur *c, int64_t *out) {
    int64_t v = 0;
    int n = 0;
    while (left(c) && is_digit(*c->p)) {
        if (++n > MAX_DIGITS) return 0;
        v = v * 10 + (*c->p++ - '0');
    }
    *out = v;
    return n > 0;
}

/* exactly `n` digits */
static int fixed(Cur *c, int n, int *out) {
    int v = 0;
    if (c->e - c->p < n) return 0;
    for (int i = 0; i < n; i++) {
        if (!is_digit(c->p[i])) return 0;
        v = v * 10 + (c->p[i] - '0');
    }
    c->p += n;
    *out = v;
    return 1;
}

/* a run of ASCII bytes but `stop` and `also`; the cursor stops on `stop`, which must come */
static int until(Cur *c, unsigned char stop, unsigned char also) {
    while (left(c) && *c->p != stop) {
        if (*c->p >= 0x80 || *c->p == also) return 0;
        c->p++;
    }
    return left(c);
}

SCANNER_INLINE int starts(const unsigned char *t, size_t n, const char *s) {
    size_t k = strlen(s);
    return n >= k && memcmp(t, s, k) == 0;
}

/* the first bytes of a list's prefixes, a flag each */
typedef struct {
    unsigned char any[256];
} FirstBytes;

static void first_bytes(FirstBytes *f, const char *const *list) {
    memset(f, 0, sizeof *f);
    for (; *list; list++) f->any[(unsigned char)(*list)[0]] = 1;
}

static int starts_any(const unsigned char *t, size_t n, const char *const *list, const FirstBytes *f) {
    if (n == 0 || !f->any[t[0]]) return 0;
    for (; *list; list++)
        if ((unsigned char)(*list)[0] == t[0] && starts(t, n, *list)) return 1;
    return 0;
}

/* where `s` (k > 0 bytes) first occurs in t[from:n], or -1 */
static ptrdiff_t find(const unsigned char *t, size_t n, size_t from, const char *s, size_t k) {
    while (from < n && k <= n - from) {
        const unsigned char *hit = memchr(t + from, (unsigned char)s[0], n - from - k + 1);
        if (!hit) return -1;
        if (memcmp(hit, s, k) == 0) return hit - t;
        from = (size_t)(hit - t) + 1;
    }
    return -1;
}

/* ------------------------------------------------------------------ the family tests */
/* `.WAIT #[0-9]+: nam='`: a WAIT record after other text on its line (families.GLUED_WAIT) */
static int glued_wait(const unsigned char *t, size_t n) {
    ptrdiff_t at = 0;
    while ((at = find(t, n, (size_t)at + 1, "WAIT #", 6)) > 0) {
        Cur c = {t + at + 6, t + n};
        const unsigned char *digits = c.p;
        while (left(&c) && is_digit(*c.p)) c.p++;
        if (c.p > digits && LIT(&c, ": nam='")) return 1;
    }
    return 0;
}

/* `^[ \t.]*(?:Client (?:sending|received)|Server (?:received|finished)) ` (families.MESSAGE_START) */
static int message_start(const unsigned char *t, size_t n) {
    Cur c = {t, t + n};
    while (left(&c) && (*c.p == ' ' || *c.p == '\t' || *c.p == '.')) c.p++;
    Cur d = c, e = c, f = c;
    return LIT(&c, "Client sending ") || LIT(&d, "Client received ") || LIT(&e, "Server received ")
           || LIT(&f, "Server finished ");
}

/* `^[ \t]*$` */
static int blank(const unsigned char *t, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (t[i] != ' ' && t[i] != '\t') return 0;
    return 1;
}

/* `^(?:Trace file |Oracle(?: .*)? Release )` (families._HEADER_START) */
static int header_start(const unsigned char *t, size_t n) {
    if (starts(t, n, "Trace file ")) return 1;
    return starts(t, n, "Oracle ") && find(t, n, 6, " Release ", 9) >= 0; /* both ways have a blank at 6 */
}

static int ascii(const unsigned char *t, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, t + i, 8);
        if (w & UINT64_C(0x8080808080808080)) return 0;
    }
    for (; i < n; i++)
        if (t[i] >= 0x80) return 0;
    return 1;
}

/* The family of a line (split_families' tests in their order); `in_header` is updated by the line:
 * a separator, `***` or blank line ends a header region, a header start opens one. */
typedef struct {
    FirstBytes other_10046, lgwr;
} Prefixes;

static int family(const unsigned char *t, size_t n, int *in_header, const Prefixes *p) {
    if (starts(t, n, "****")) {
        *in_header = 0;
        return F_SEPARATOR;
    }
    if (starts(t, n, "***")) {
        *in_header = 0;
        return F_STAMPS;
    }
    if (starts(t, n, "WAIT #")) return F_WAIT;
    if (starts_any(t, n, OTHER_10046, &p->other_10046)) return glued_wait(t, n) ? F_WAIT : F_10046;
    if (n > 0 && (t[0] == 'T' || t[0] == 'O') && header_start(t, n)) *in_header = 1;
    if (find(t, n, 0, "msgid=", 6) >= 0) return F_TRANSPORT;
    if (blank(t, n)) {
        *in_header = 0;
        return F_BLANK;
    }
    if (glued_wait(t, n)) return F_WAIT;
    if (message_start(t, n)) return F_TRANSPORT;
    if (starts_any(t, n, LGWR, &p->lgwr)) return F_LGWR;
    return *in_header ? F_HEADER : F_OTHER;
}

/* ------------------------------------------------------------------ the hot shapes */
/* days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil) */
static int64_t days_from_civil(int y, int m, int d) {
    y -= m <= 2;
    const int era = y / 400; /* years are 1900-2999 here: never negative */
    const int yoe = y - era * 400;
    const int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return (int64_t)era * 146097 + doe - 719468;
}

static int days_in_month(int y, int m) {
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 ? 28 + leap : days[m - 1];
}

/* `YYYY-MM-DD<sep>HH:MM:SS.f{1,9}`: years 1900-2999, a valid date, seconds 00-59 (fastpath._DATE_TIME);
 * microseconds since the epoch from the first six fraction digits, and how many there were (at most 6) */
static int date_time(Cur *c, unsigned char sep, int64_t *micros, int *digits) {
    int y, mo, d, h, mi, s;
    if (!fixed(c, 4, &y) || !LIT(c, "-") || !fixed(c, 2, &mo) || !LIT(c, "-") || !fixed(c, 2, &d)) return 0;
    if (!next_is(c, sep)) return 0;
    c->p++;
    if (!fixed(c, 2, &h) || !LIT(c, ":") || !fixed(c, 2, &mi) || !LIT(c, ":") || !fixed(c, 2, &s)) return 0;
    if (y < 1900 || y > 2999 || mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59
        || s > 59)
        return 0;
    if (!LIT(c, ".")) return 0;
    int n = 0, frac = 0;
    while (left(c) && is_digit(*c->p)) {
        if (++n > 9) return 0;
        if (n <= 6) frac = frac * 10 + (*c->p - '0');
        c->p++;
    }
    if (n == 0) return 0;
    *digits = n < 6 ? n : 6;
    for (int i = *digits; i < 6; i++) frac *= 10;
    *micros = (days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s) * INT64_C(1000000) + frac;
    return 1;
}

/* `[A-Za-z_][A-Za-z0-9_]*\.c` */
static int source_file(Cur *c) {
    if (!left(c) || is_digit(*c->p) || !is_word(*c->p)) return 0;
    while (left(c) && is_word(*c->p)) c->p++;
    return LIT(c, ".c");
}

/* `\((?:[^()]|\([^()]*\))*\)` up to the end of the line */
static int container(Cur *c) {
    if (!LIT(c, "(")) return 0;
    int depth = 1;
    while (left(c)) {
        unsigned char ch = *c->p++;
        if (ch >= 0x80) return 0;
        if (ch == '(') {
            if (depth == 2) return 0;
            depth = 2;
        } else if (ch == ')' && --depth == 0) {
            return at_end(c);
        }
    }
    return 0;
}

enum { NOT_A_STAMP, KRS, ADR_LOCAL, ADR_ISO };

/* a `***` line: a canonical krs stamp, bare ADR line or ISO ADR line (fastpath.KRS_SHAPE,
 * ADR_LOCAL_SHAPE, ADR_ISO_SHAPE), or NOT_A_STAMP (back to the fast path and the grammar) */
static int stamp(const unsigned char *t, size_t n, int64_t *micros, int *digits, int32_t *offset) {
    Cur c = {t, t + n};
    int64_t src_line;
    if (!LIT(&c, "*** ")) return NOT_A_STAMP;
    Cur iso = c;
    if (date_time(&c, ' ', micros, digits)) {
        if (at_end(&c)) return ADR_LOCAL;
        if (!LIT(&c, " ")) return NOT_A_STAMP;
        int krs = LIT(&c, "[") ? source_file(&c) && LIT(&c, ":") && number(&c, &src_line) && LIT(&c, "]")
                               : number(&c, &src_line) && LIT(&c, " ") && source_file(&c);
        return krs && at_end(&c) ? KRS : NOT_A_STAMP;
    }
    c = iso;
    if (!date_time(&c, 'T', micros, digits) || !left(&c) || (*c.p != '+' && *c.p != '-')) return NOT_A_STAMP;
    int sign = *c.p++ == '-' ? -1 : 1, hh, mm;
    if (!fixed(&c, 2, &hh) || !LIT(&c, ":") || !fixed(&c, 2, &mm)) return NOT_A_STAMP;
    if (mm >= 60 || hh * 60 + mm > MAX_OFFSET_MIN) return NOT_A_STAMP;
    *offset = sign * (hh * 60 + mm);
    if (at_end(&c)) return ADR_ISO;
    return LIT(&c, " ") && container(&c) ? ADR_ISO : NOT_A_STAMP;
}

typedef struct {
    int kind;
    const unsigned char *oper;
    size_t oper_len;
    int64_t thread, seq, msgid;
} Message;

/* a canonical 16410 message (fastpath.MESSAGE_KEY_SHAPE, then ` msgid=<n>` to the end of the line) */
static int message(const unsigned char *t, size_t n, Message *m) {
    Cur c = {t, t + n};
    LIT(&c, "... ");
    m->kind = -1;
    for (int k = 0; MESSAGE_TEXT[k] && m->kind < 0; k++) /* the texts differ in their first 8 bytes */
        if (c.e - c.p >= 8 && memcmp(c.p, MESSAGE_TEXT[k], 8) == 0) m->kind = k;
    if (m->kind < 0 || !lit(&c, MESSAGE_TEXT[m->kind], strlen(MESSAGE_TEXT[m->kind])) || !LIT(&c, " [")) return 0;
    const unsigned char *func = c.p;
    while (left(&c) && is_word(*c.p)) c.p++;
    if (c.p == func || !LIT(&c, "]")) return 0;
    LIT(&c, " response");
    if (!LIT(&c, " oper='")) return 0;
    m->oper = c.p;
    if (!until(&c, '\'', '\'')) return 0;
    m->oper_len = (size_t)(c.p - m->oper);
    if (!LIT(&c, "' flag=")) return 0;
    Cur flag = c; /* `0x[0-9a-fA-F]+|-?[0-9]+`, then a blank */
    const unsigned char *from;
    if (LIT(&c, "0x")) {
        for (from = c.p; left(&c) && is_hex(*c.p);) c.p++;
        if (c.p == from || !next_is(&c, ' ')) c = flag;
    }
    if (c.p == flag.p) {
        LIT(&c, "-");
        for (from = c.p; left(&c) && is_digit(*c.p);) c.p++;
        if (c.p == from) return 0;
    }
    return LIT(&c, " thrd=") && number(&c, &m->thread) && LIT(&c, " seq=") && number(&c, &m->seq)
           && LIT(&c, " msgid=") && number(&c, &m->msgid) && at_end(&c);
}

typedef struct {
    int64_t cursor, ela, tim;
    const unsigned char *event;
    size_t event_len;
} Wait;

/* the first ` tim=` of a line, found by its `t` (a WAIT line has fewer than blanks), or -1 */
static ptrdiff_t find_tim(const unsigned char *t, size_t n) {
    ptrdiff_t at = 0;
    while ((at = find(t, n, (size_t)at + 1, "tim=", 4)) > 0)
        if (t[at - 1] == ' ') return at - 1;
    return -1;
}

/* a canonical WAIT line: fastpath.WAIT_KEY_SHAPE up to its first ` tim=`, then digits to the end */
static int wait_line(const unsigned char *t, size_t n, Wait *w) {
    ptrdiff_t tim_at = find_tim(t, n);
    if (tim_at < 0) return 0;
    Cur tim = {t + tim_at + 5, t + n};
    if (!number(&tim, &w->tim) || !at_end(&tim) || w->tim >= MAX_MICROS) return 0;
    Cur c = {t, t + tim_at};
    if (!LIT(&c, "WAIT #") || !number(&c, &w->cursor) || !LIT(&c, ": nam='")) return 0;
    w->event = c.p;
    if (!until(&c, '\'', '\'')) return 0;
    w->event_len = (size_t)(c.p - w->event);
    if (!LIT(&c, "' ela=")) return 0;
    LIT(&c, " ");
    if (!number(&c, &w->ela) || w->ela >= MAX_MICROS) return 0;
    while (left(&c)) { /* ` <name>=<value>`: `[!-&(-<>-~][^=']*=[!-~]+` */
        if (!LIT(&c, " ") || !left(&c)) return 0;
        unsigned char first = *c.p++;
        if (first < '!' || first > '~' || first == '\'' || first == '=') return 0;
        if (!until(&c, '=', '\'')) return 0;
        c.p++; /* the '=' */
        const unsigned char *value = c.p;
        while (left(&c) && *c.p >= '!' && *c.p <= '~') c.p++;
        if (c.p == value) return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------ the scan */
typedef struct {
    Table messages, krs, adr, waits, rest;
    Buf rest_text;
    int64_t blank, other_10046, separator, other;
    int oom;
} Scan;

/* the tables' columns, as analyzer.base.schemas declares them (MESSAGES, KRS, ADR, WAITS) */
static const Column MESSAGE_COLUMNS[] = {{"line", COL_I64},   {"kind", COL_STR}, {"oper", COL_STR},
                                         {"thread", COL_I64}, {"seq", COL_I64},  {"msgid", COL_I64}};
static const Column KRS_COLUMNS[] = {{"line", COL_I64}, {"local", COL_TS}, {"digits", COL_I8}};
static const Column ADR_COLUMNS[] = {
    {"line", COL_I64}, {"local", COL_TS}, {"digits", COL_I8}, {"utc_offset_min", COL_I32N}};
static const Column WAIT_COLUMNS[] = {
    {"line", COL_I64}, {"cursor", COL_I64}, {"event", COL_STR}, {"ela_us", COL_I64}, {"tim", COL_I64}};
static const Column REST_COLUMNS[] = {{"line", COL_I64}, {"family", COL_U8}};
#define COLUMNS(spec) (spec), (int)(sizeof(spec) / sizeof((spec)[0]))

/* the line parsed (or counted, for an ignored family) into the scan's tables; 0: it goes back */
static int take(Scan *s, int fam, const unsigned char *t, size_t n, int64_t line) {
    Table *tab;
    switch (fam) {
    case F_BLANK: s->blank++; return 1;
    case F_10046: s->other_10046++; return 1;
    case F_SEPARATOR: s->separator++; return 1;
    case F_OTHER: s->other++; return 1;
    case F_STAMPS: {
        int64_t micros = 0;
        int digits = 0;
        int32_t offset = 0;
        int kind = stamp(t, n, &micros, &digits, &offset);
        if (kind == NOT_A_STAMP) return 0;
        tab = kind == KRS ? &s->krs : &s->adr;
        s->oom |= !put_i64(tab, 0, line) || !put_i64(tab, 1, micros) || !put_i64(tab, 2, digits);
        if (kind == ADR_LOCAL) s->oom |= !put_null(tab, 3);
        if (kind == ADR_ISO) s->oom |= !put_i64(tab, 3, offset);
        s->oom |= !end_row(tab);
        return 1;
    }
    case F_TRANSPORT: {
        Message m;
        if (!message(t, n, &m)) return 0;
        tab = &s->messages;
        const char *kind = MESSAGE_KIND[m.kind];
        s->oom |= !put_i64(tab, 0, line) || !put_str(tab, 1, (const unsigned char *)kind, strlen(kind))
                  || !put_str(tab, 2, m.oper, m.oper_len) || !put_i64(tab, 3, m.thread) || !put_i64(tab, 4, m.seq)
                  || !put_i64(tab, 5, m.msgid) || !end_row(tab);
        return 1;
    }
    case F_WAIT: {
        Wait w;
        if (!wait_line(t, n, &w)) return 0;
        tab = &s->waits;
        s->oom |= !put_i64(tab, 0, line) || !put_i64(tab, 1, w.cursor) || !put_str(tab, 2, w.event, w.event_len)
                  || !put_i64(tab, 3, w.ela) || !put_i64(tab, 4, w.tim) || !end_row(tab);
        return 1;
    }
    default: return 0; /* log writer and header lines: the fast paths and grammars */
    }
}

enum { SCANNED, DECLINED };

static int run(Scan *s, const unsigned char *d, size_t n, int64_t line, int *in_header, int all_ascii) {
    size_t pos = 0;
    Prefixes prefixes;
    first_bytes(&prefixes.other_10046, OTHER_10046);
    first_bytes(&prefixes.lgwr, LGWR);
    while (pos < n && !s->oom) {
        const unsigned char *nl = memchr(d + pos, '\n', n - pos);
        size_t end = nl ? (size_t)(nl - d) : n, len = end - pos;
        const unsigned char *t = d + pos;
        if (len > 0 && t[len - 1] == '\r') len--;
        if (len > MAX_LINE) return DECLINED;
        int fam = family(t, len, in_header, &prefixes);
        if ((!all_ascii && !ascii(t, len)) || !take(s, fam, t, len, line)) {
            s->oom |= !put_i64(&s->rest, 0, line) || !put_i64(&s->rest, 1, fam) || !end_row(&s->rest);
            s->oom |= !buf_put(&s->rest_text, t, end - pos) || !buf_put(&s->rest_text, "\n", 1);
        }
        pos = end + 1;
        line++;
    }
    return SCANNED;
}

static void scan_free(Scan *s) {
    table_free(&s->messages);
    table_free(&s->krs);
    table_free(&s->adr);
    table_free(&s->waits);
    table_free(&s->rest);
    buf_free(&s->rest_text);
}

PyDoc_STRVAR(scan_doc,
             "scan(data, first_line, in_header, all_ascii) -> None | (in_header, (blank, 10046, separator, other),\n"
             "    messages, krs, adr, waits, rest, rest_text)\n\n"
             "One chunk of newline-terminated lines: the header state at its end, the ignored lines counted,\n"
             "the parsed tables and the lines handed back (line, family) as Arrow PyCapsule pairs\n"
             "(schema, array), and the bytes of the lines handed back. None: a line is too long (the pure path).");

static PyObject *scan(PyObject *module, PyObject *args) {
    PyObject *bytes; /* immutable: nothing can change it while the GIL is released */
    char *data;
    Py_ssize_t size;
    long long first;
    int in_header, all_ascii, outcome;
    (void)module;
    if (!PyArg_ParseTuple(args, "SLpp", &bytes, &first, &in_header, &all_ascii)) return NULL;
    if (PyBytes_AsStringAndSize(bytes, &data, &size) < 0) return NULL;
    if (size > 0 && data[size - 1] != '\n') {
        PyErr_SetString(PyExc_ValueError, "a chunk ends with a newline");
        return NULL;
    }
    if (first < 0 || first > INT64_MAX - size) {
        PyErr_SetString(PyExc_ValueError, "line numbers out of range");
        return NULL;
    }
    if (size > INT32_MAX) Py_RETURN_NONE; /* the views' 32-bit offsets; chunks are far smaller */
    Scan s;
    memset(&s, 0, sizeof s);
    table_init(&s.messages, COLUMNS(MESSAGE_COLUMNS));
    table_init(&s.krs, COLUMNS(KRS_COLUMNS));
    table_init(&s.adr, COLUMNS(ADR_COLUMNS));
    table_init(&s.waits, COLUMNS(WAIT_COLUMNS));
    table_init(&s.rest, COLUMNS(REST_COLUMNS));
    Py_BEGIN_ALLOW_THREADS
    outcome = run(&s, (const unsigned char *)data, (size_t)size, (int64_t)first, &in_header, all_ascii);
    Py_END_ALLOW_THREADS
    if (s.oom) {
        scan_free(&s);
        return PyErr_NoMemory();
    }
    if (outcome == DECLINED) {
        scan_free(&s);
        Py_RETURN_NONE;
    }
    PyObject *tables[5] = {NULL};
    Table *each[5] = {&s.messages, &s.krs, &s.adr, &s.waits, &s.rest};
    PyObject *out = NULL;
    int ok = 1;
    for (int i = 0; i < 5 && ok; i++) ok = (tables[i] = table_export(each[i])) != NULL;
    if (ok)
        out = Py_BuildValue("(N(LLLL)OOOOOy#)", PyBool_FromLong(in_header), (long long)s.blank,
                            (long long)s.other_10046, (long long)s.separator, (long long)s.other, tables[0],
                            tables[1], tables[2], tables[3], tables[4],
                            s.rest_text.p ? (const char *)s.rest_text.p : "", (Py_ssize_t)s.rest_text.len);
    for (int i = 0; i < 5; i++) Py_XDECREF(tables[i]);
    scan_free(&s);
    return out;
}

static PyObject *constants(PyObject *module, PyObject *unused) {
    (void)module;
    (void)unused;
    PyObject *lists[5] = {PyList_New(0), PyList_New(0), PyList_New(0), PyList_New(0), PyList_New(0)};
    const char *const *sources[5] = {OTHER_10046, LGWR, MESSAGE_TEXT, MESSAGE_KIND, FAMILY_NAME};
    for (int i = 0; i < 5; i++) {
        if (!lists[i]) goto fail;
        for (const char *const *s = sources[i]; *s; s++) {
            PyObject *text = PyUnicode_FromString(*s);
            if (!text || PyList_Append(lists[i], text) < 0) {
                Py_XDECREF(text);
                goto fail;
            }
            Py_DECREF(text);
        }
    }
    return Py_BuildValue("{sNsNsNsNsNsisiss}", "other_10046", lists[0], "lgwr", lists[1], "message_text", lists[2],
                         "message_kind", lists[3], "families", lists[4], "max_line", MAX_LINE, "max_digits",
                         MAX_DIGITS, "sources", SCANNER_SOURCES);
fail:
    for (int i = 0; i < 5; i++) Py_XDECREF(lists[i]);
    return NULL;
}

static PyMethodDef METHODS[] = {
    {"scan", scan, METH_VARARGS, scan_doc},
    {"constants", constants, METH_NOARGS, "The prefixes, texts and limits compiled in (tests compare them)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {
    PyModuleDef_HEAD_INIT, "_scanner", "The compiled line scanner (see analyzer.parse.scanner).", -1, METHODS,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__scanner(void) { return PyModule_Create(&MODULE); }
