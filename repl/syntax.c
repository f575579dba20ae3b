/* The original grammar, recognised with ANTLR's lexer rules and error strategy (repl/syntax.h).
 * Token types and names are those of the original's generated RASP.tokens, so that expected
 * sets print in ANTLR's order. Each recognising function carries its grammar rule. */
#include "repl/syntax.h"

#include <stdint.h>
#include <string.h>

enum {
    T_EOF = 0, /* ANTLR's -1, kept at bit 0 of the sets */
    T_SEMI = 1, T_SET, T_SOP, T_SELECTOR, T_EXAMPLE, T_SHOW, T_FULLSEQ, T_ON, T_OFF, T_EXAMPLES,
    T_EXITP, T_EXIT, T_QUIT, T_QUITP, T_LOAD, T_ASSIGN, T_DRAW, T_LP, T_COMMA, T_RP, T_COLON, T_DEF,
    T_LBRACE, T_RBRACE, T_FOR, T_IN, T_RETURN, T_AGG, T_LBRACK, T_RBRACK, T_NOT, T_MINUS, T_PLUS,
    T_ROUND, T_INDICATOR, T_POW, T_MUL, T_DIV, T_MOD, T_EQ, T_LE, T_GE, T_GT, T_LT, T_SELECT, T_NE,
    T_AND, T_OR, T_IF, T_ELSE, T_RANGE, T_ZIP, T_LEN,
    T_FLOAT, T_POSINT, T_STRING, T_COMMENT, T_ID,
    T_COUNT
};

/* The literal tokens, in token-type order (1..53). */
static const char *const literals[] = {
    NULL, ";", "set", "s-op", "selector", "example", "show", "full seq display", "on", "off",
    "examples", "exit()", "exit", "quit", "quit()", "load", "=", "draw", "(", ",", ")", ":", "def",
    "{", "}", "for", "in", "return", "aggregate(", "[", "]", "not", "-", "+", "round", "indicator",
    "^", "*", "/", "%", "==", "<=", ">=", ">", "<", "select(", "!=", "and", "or", "if", "else",
    "range(", "zip(", "len(",
};
static const char *const symbolic[] = {"Float", "PosInt", "String", "Comment", "ID"};

typedef uint64_t TokSet;
#define BIT(t) ((TokSet)1 << (t))

static const TokSet FIRST_EXPR = BIT(T_LP) | BIT(T_LBRACE) | BIT(T_AGG) | BIT(T_LBRACK) | BIT(T_NOT) |
                                 BIT(T_MINUS) | BIT(T_PLUS) | BIT(T_ROUND) | BIT(T_INDICATOR) |
                                 BIT(T_SELECT) | BIT(T_RANGE) | BIT(T_ZIP) | BIT(T_LEN) | BIT(T_FLOAT) |
                                 BIT(T_POSINT) | BIT(T_STRING) | BIT(T_ID);
static const TokSet FIRST_REPL = BIT(T_SET) | BIT(T_SOP) | BIT(T_SELECTOR) | BIT(T_SHOW) | BIT(T_FULLSEQ) |
                                 BIT(T_EXAMPLES) | BIT(T_EXITP) | BIT(T_EXIT) | BIT(T_QUIT) | BIT(T_QUITP);
#define FIRST_RASP (FIRST_EXPR | BIT(T_LOAD) | BIT(T_DRAW) | BIT(T_DEF) | BIT(T_FOR))
#define FIRST_STMT (FIRST_RASP | FIRST_REPL | BIT(T_COMMENT))
/* Tokens that continue an expression (postfix and binary operators; != is only select's). */
static const TokSet EXPR_CONT = BIT(T_LBRACK) | BIT(T_LP) | BIT(T_POW) | BIT(T_MUL) | BIT(T_DIV) |
                                BIT(T_MOD) | BIT(T_PLUS) | BIT(T_MINUS) | BIT(T_EQ) | BIT(T_LE) |
                                BIT(T_GE) | BIT(T_GT) | BIT(T_LT) | BIT(T_AND) | BIT(T_OR) | BIT(T_IF) |
                                BIT(T_IN);
/* What may follow an expression somewhere (insertion checks do not track the context). */
#define FOLLOW_EXPR (EXPR_CONT | BIT(T_SEMI) | BIT(T_COMMA) | BIT(T_RP) | BIT(T_RBRACK) | BIT(T_RBRACE) | \
                     BIT(T_COLON) | BIT(T_ELSE) | BIT(T_FOR) | BIT(T_LBRACE) | BIT(T_EOF) | BIT(T_COMMENT) | FIRST_STMT)
#define FOLLOW_STMT (BIT(T_EOF) | FIRST_STMT | BIT(T_RETURN) | BIT(T_RBRACE))
static const TokSet SELOPS = BIT(T_EQ) | BIT(T_LT) | BIT(T_GT) | BIT(T_GE) | BIT(T_LE) | BIT(T_NE);
#define FIRST_BODY (FIRST_RASP | BIT(T_COMMENT))

typedef struct Tok {
    int type;
    size_t start, end; /* bytes of the text */
} Tok;

typedef struct Parser {
    Arena *a;
    const char *text;
    Tok *toks;
    size_t n, pos;
    size_t lex_error_at;     /* index of the token the lexer failed to make (n if none) */
    const char *lex_message;
    bool speculating;        /* predicting: fail without a message */
    size_t spec_fail;        /* where a speculation failed */
    SynResult *res;
} Parser;

/* ---- lexer ---- */

static bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* The longest token at s (ties go to the earlier rule, so keywords beat ID); 0 if none. */
static size_t match_token(const char *s, int *type) {
    size_t best = 0;
    for (int t = 1; t <= T_LEN; t++) {
        size_t len = strlen(literals[t]);
        if (len > best && strncmp(s, literals[t], len) == 0) {
            best = len;
            *type = t;
        }
    }
    size_t d = 0;
    while (is_digit(s[d])) d++;
    if (d) {
        size_t f = 0;
        if (s[d] == '.' && is_digit(s[d + 1])) {
            f = d + 1;
            while (is_digit(s[f])) f++;
        }
        if (f > best) { best = f; *type = T_FLOAT; }
        if (d > best) { best = d; *type = T_POSINT; }
    }
    if (s[0] == '"') {
        size_t k = 1;
        while (s[k] && s[k] != '"' && s[k] != '\r' && s[k] != '\n') k++;
        if (s[k] == '"' && k + 1 > best) { best = k + 1; *type = T_STRING; }
    }
    if (s[0] == '#') {
        size_t k = 1;
        while (s[k] && s[k] != '\r' && s[k] != '\n') k++;
        if (k > best) { best = k; *type = T_COMMENT; }
    }
    if (is_alpha(s[0])) {
        size_t k = 1;
        while (is_alpha(s[k]) || is_digit(s[k])) k++;
        if (k > best) { best = k; *type = T_ID; }
    }
    return best;
}

/* ANTLR shows \n, \r and \t escaped in token texts. */
static const char *escaped(Arena *a, const char *s, size_t len) {
    char *out = arena_alloc(a, 2 * len + 1);
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '\n' || c == '\r' || c == '\t') {
            out[o++] = '\\';
            out[o++] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
        } else {
            out[o++] = c;
        }
    }
    out[o] = '\0';
    return out;
}

static void lex(Parser *p) {
    const char *s = p->text;
    size_t len = strlen(s), cap = 16, i = 0;
    p->toks = ARENA_ARRAY(p->a, Tok, cap);
    p->n = 0;
    p->lex_error_at = SIZE_MAX;
    while (true) {
        while (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n') i++;
        if (p->n + 1 >= cap) {
            p->toks = arena_grow(p->a, p->toks, p->n, cap * 2, sizeof(Tok));
            cap *= 2;
        }
        if (i >= len) break;
        int type = 0;
        size_t m = match_token(s + i, &type);
        if (m == 0) {
            /* The text the lexer consumed before failing: a whole code point, or an unfinished
             * string up to the character that ended it. */
            size_t k = 1;
            if (s[i] == '"') {
                while (s[i + k] && s[i + k] != '"' && s[i + k] != '\r' && s[i + k] != '\n') k++;
                if (s[i + k]) k++;
            } else {
                while (((unsigned char)s[i + k] & 0xC0) == 0x80) k++;
            }
            p->lex_error_at = p->n;
            p->lex_message = arena_printf(p->a, "token recognition error at: '%s'", escaped(p->a, s + i, k));
            break;
        }
        p->toks[p->n++] = (Tok){type, i, i + m};
        i += m;
    }
    if (p->lex_error_at == SIZE_MAX) p->lex_error_at = p->n + 1;
    p->toks[p->n] = (Tok){T_EOF, len, len};
}

/* ---- token access and messages ---- */

/* Stops parsing: the error already recorded in p->res. */
#define FAIL false

static bool lex_failure(Parser *p) {
    p->res->status = SYN_ERROR;
    p->res->message = p->lex_message;
    p->speculating = false; /* the lexer's error stops prediction too */
    return FAIL;
}

/* The token k ahead (1 = current). A token past a lexer error raises it. */
static bool la(Parser *p, size_t k, int *type) {
    size_t i = p->pos + k - 1;
    if (i >= p->lex_error_at) return lex_failure(p);
    *type = i < p->n ? p->toks[i].type : T_EOF;
    return true;
}

static const char *token_text(Parser *p, size_t i) {
    if (i >= p->n) return "<EOF>";
    return escaped(p->a, p->text + p->toks[i].start, p->toks[i].end - p->toks[i].start);
}

static const char *type_name(int t) {
    if (t == T_EOF) return "<EOF>";
    if (t <= T_LEN) return NULL;
    return symbolic[t - T_FLOAT];
}

static const char *set_text(Parser *p, TokSet s) {
    size_t count = 0;
    for (int t = 0; t < T_COUNT; t++) count += (s >> t) & 1;
    char *out = arena_alloc(p->a, 40 * T_COUNT);
    out[0] = '\0';
    if (count > 1) strcat(out, "{");
    bool first = true;
    for (int t = 0; t < T_COUNT; t++) {
        if (!((s >> t) & 1)) continue;
        if (!first) strcat(out, ", ");
        first = false;
        const char *name = type_name(t);
        if (name) {
            strcat(out, name);
        } else {
            strcat(out, "'");
            strcat(out, literals[t]);
            strcat(out, "'");
        }
    }
    if (count > 1) strcat(out, "}");
    return out;
}

/* An error at token index `at`: at the end of the text the original reads on instead. */
static bool syntax_error(Parser *p, size_t at, const char *message) {
    if (p->speculating) {
        p->spec_fail = at;
        return FAIL;
    }
    if (at >= p->n) {
        p->res->status = SYN_INCOMPLETE;
        return FAIL;
    }
    p->res->status = SYN_ERROR;
    p->res->message = message;
    return FAIL;
}

/* ANTLR's error when no alternative of a decision started at `start` fits token `at`. */
static bool no_viable(Parser *p, size_t start, size_t at) {
    if (p->speculating || at >= p->n) return syntax_error(p, at, NULL);
    size_t len = 0;
    for (size_t i = start; i <= at; i++) len += p->toks[i].end - p->toks[i].start;
    char *text = arena_alloc(p->a, len + 1);
    for (size_t i = start; i <= at; i++) strncat(text, p->text + p->toks[i].start, p->toks[i].end - p->toks[i].start);
    return syntax_error(p, at, arena_printf(p->a, "no viable alternative at input '%s'", escaped(p->a, text, len)));
}

/* sync() before a decision that must take one of `expected`: single-token deletion, else a
 * mismatch. */
static bool sync_block(Parser *p, TokSet expected) {
    int t1, t2;
    if (!la(p, 1, &t1)) return FAIL;
    if (BIT(t1) & expected) return true;
    if (p->speculating || t1 == T_EOF) return syntax_error(p, p->pos, NULL);
    if (!la(p, 2, &t2)) return FAIL;
    const char *what = (BIT(t2) & expected) ? "extraneous input" : "mismatched input";
    return syntax_error(p, p->pos, arena_printf(p->a, "%s '%s' expecting %s", what, token_text(p, p->pos),
                                                set_text(p, expected)));
}

/* match() of one of `expected`, with ANTLR's inline recovery messages; `follow` is what may
 * come after it (for "missing X at Y"). */
static bool expect_set(Parser *p, TokSet expected, TokSet follow) {
    int t1, t2;
    if (!la(p, 1, &t1)) return FAIL;
    if (BIT(t1) & expected) {
        p->pos++;
        return true;
    }
    if (p->speculating || t1 == T_EOF) return syntax_error(p, p->pos, NULL);
    if (!la(p, 2, &t2)) return FAIL;
    const char *exp = set_text(p, expected);
    if (BIT(t2) & expected)
        return syntax_error(p, p->pos, arena_printf(p->a, "extraneous input '%s' expecting %s", token_text(p, p->pos), exp));
    if (BIT(t1) & follow) {
        if (expected == BIT(T_SEMI)) { /* the original reads on after a missing ';' */
            p->res->status = SYN_INCOMPLETE;
            return FAIL;
        }
        return syntax_error(p, p->pos, arena_printf(p->a, "missing %s at '%s'", exp, token_text(p, p->pos)));
    }
    return syntax_error(p, p->pos, arena_printf(p->a, "mismatched input '%s' expecting %s", token_text(p, p->pos), exp));
}

static bool expect(Parser *p, int type, TokSet follow) { return expect_set(p, BIT(type), follow); }

static bool next_is(Parser *p, int type, bool *yes) {
    int t;
    if (!la(p, 1, &t)) return FAIL;
    *yes = t == type;
    return true;
}

/* ---- expressions ---- */

static bool expr(Parser *p);
static bool operand(Parser *p);

/* exprsList : expr (',' exprsList)? */
static bool exprs_list(Parser *p) {
    for (;;) {
        if (!expr(p)) return FAIL;
        bool comma;
        if (!next_is(p, T_COMMA, &comma)) return FAIL;
        if (!comma) return true;
        p->pos++;
    }
}

/* idsList : ID (',' idsList)? */
static bool ids_list(Parser *p, TokSet follow) {
    for (;;) {
        if (!expect(p, T_ID, BIT(T_COMMA) | follow)) return FAIL;
        bool comma;
        if (!next_is(p, T_COMMA, &comma)) return FAIL;
        if (!comma) return true;
        p->pos++;
    }
}

/* Runs `alt` as ANTLR's prediction would, from the current token: *fits tells whether it got
 * through (then *after is where it ended; else p->spec_fail is the token it failed at). False
 * when the lexer failed meanwhile, which is an error of its own. */
static bool speculate(Parser *p, bool (*alt)(Parser *), bool *fits, size_t *after) {
    size_t save = p->pos;
    bool was = p->speculating;
    p->speculating = true;
    p->spec_fail = SIZE_MAX;
    bool ok = alt(p);
    if (!p->speculating) return FAIL; /* the lexer failed */
    p->speculating = was;
    *fits = ok;
    *after = p->pos;
    p->pos = save;
    return true;
}

static bool comp_head(Parser *p) { /* '[' expr, then the token deciding list vs comprehension */
    p->pos++;
    return expr(p);
}

static bool dict_head(Parser *p) { /* '{' expr ':' expr */
    p->pos++;
    if (!expr(p) || !expect(p, T_COLON, FIRST_EXPR)) return FAIL;
    return expr(p);
}

/* aList : '[' exprsList? ']'   listCompExpr : '[' expr 'for' idsList 'in' expr ']'
 * aDict : '{' namedExprsList? '}'   dictCompExpr : '{' expr ':' expr 'for' idsList 'in' expr '}'
 * ANTLR predicts which from the token after the first element. */
static bool bracketed(Parser *p, bool dict) {
    size_t start = p->pos;
    int close = dict ? T_RBRACE : T_RBRACK, t;
    if (!la(p, 2, &t)) return FAIL;
    bool comp = false;
    if (t != close) {
        bool fits;
        size_t after;
        if (!speculate(p, dict ? dict_head : comp_head, &fits, &after)) return FAIL;
        if (!fits) return no_viable(p, start, p->spec_fail);
        if (after >= p->lex_error_at) return lex_failure(p);
        int next = after < p->n ? p->toks[after].type : T_EOF;
        if (next == T_FOR) comp = true;
        else if (next != T_COMMA && next != close) return no_viable(p, start, after);
    }
    p->pos++; /* '[' or '{' */
    if (comp) {
        if (dict && (!expr(p) || !expect(p, T_COLON, FIRST_EXPR))) return FAIL;
        if (!expr(p) || !expect(p, T_FOR, BIT(T_ID)) || !ids_list(p, BIT(T_IN)) ||
            !expect(p, T_IN, FIRST_EXPR) || !expr(p))
            return FAIL;
        return expect(p, close, FOLLOW_EXPR);
    }
    if (!sync_block(p, FIRST_EXPR | BIT(close))) return FAIL;
    bool empty;
    if (!next_is(p, close, &empty)) return FAIL;
    if (!empty) {
        for (;;) { /* exprsList / namedExprsList */
            if (!expr(p)) return FAIL;
            if (dict && (!expect(p, T_COLON, FIRST_EXPR) || !expr(p))) return FAIL;
            bool comma;
            if (!next_is(p, T_COMMA, &comma)) return FAIL;
            if (!comma) break;
            p->pos++;
        }
    }
    return expect(p, close, FOLLOW_EXPR);
}

/* The primary alternatives of expr (and its prefix operators):
 *   '(' expr ')' | ('not'|'-'|'+') expr | ('round'|'indicator') '(' expr ')'
 * | 'select(' expr ',' expr ',' selop ')' | ID | atom | aList | aDict | listCompExpr
 * | dictCompExpr | 'aggregate(' expr ',' expr (',' expr)? ')' | 'range(' exprsList ')'
 * | 'zip(' exprsList ')' | 'len(' expr ')' */
static bool operand(Parser *p) {
    if (!sync_block(p, FIRST_EXPR)) return FAIL;
    int t;
    la(p, 1, &t);
    switch (t) {
    case T_LP:
        p->pos++;
        return expr(p) && expect(p, T_RP, FOLLOW_EXPR);
    case T_NOT: case T_MINUS: case T_PLUS:
        p->pos++;
        return operand(p);
    case T_ROUND: case T_INDICATOR:
        p->pos++;
        return expect(p, T_LP, FIRST_EXPR) && expr(p) && expect(p, T_RP, FOLLOW_EXPR);
    case T_SELECT:
        p->pos++;
        return expr(p) && expect(p, T_COMMA, FIRST_EXPR) && expr(p) && expect(p, T_COMMA, SELOPS) &&
               expect_set(p, SELOPS, BIT(T_RP)) && expect(p, T_RP, FOLLOW_EXPR);
    case T_AGG: {
        p->pos++;
        if (!expr(p) || !expect(p, T_COMMA, FIRST_EXPR) || !expr(p)) return FAIL;
        bool comma;
        if (!next_is(p, T_COMMA, &comma)) return FAIL;
        if (comma && (p->pos++, !expr(p))) return FAIL;
        return expect(p, T_RP, FOLLOW_EXPR);
    }
    case T_RANGE: case T_ZIP:
        p->pos++;
        return exprs_list(p) && expect(p, T_RP, FOLLOW_EXPR);
    case T_LEN:
        p->pos++;
        return expr(p) && expect(p, T_RP, FOLLOW_EXPR);
    case T_LBRACK: return bracketed(p, false);
    case T_LBRACE: return bracketed(p, true);
    default: /* ID, Float, PosInt, String */
        p->pos++;
        return true;
    }
}

/* expr: an operand, then postfix and binary operators (the left-recursive alternatives):
 *   expr '[' expr ']' | expr '(' exprsList? ')' | expr bop expr | expr 'if' expr 'else' expr
 *   | expr 'in' expr
 * Precedence decides the tree, not which texts parse, so none is needed here. */
static bool expr(Parser *p) {
    if (!operand(p)) return FAIL;
    for (;;) {
        int t;
        if (!la(p, 1, &t)) return FAIL;
        if (!(BIT(t) & EXPR_CONT)) return true;
        p->pos++;
        if (t == T_LBRACK) {
            if (!expr(p) || !expect(p, T_RBRACK, FOLLOW_EXPR)) return FAIL;
        } else if (t == T_LP) {
            bool close;
            if (!sync_block(p, FIRST_EXPR | BIT(T_RP)) || !next_is(p, T_RP, &close)) return FAIL;
            if (!close && !exprs_list(p)) return FAIL;
            if (!expect(p, T_RP, FOLLOW_EXPR)) return FAIL;
        } else if (t == T_IF) {
            if (!expr(p) || !expect(p, T_ELSE, FIRST_EXPR) || !operand(p)) return FAIL;
        } else if (!operand(p)) {
            return FAIL;
        }
    }
}

/* ---- statements ---- */

static bool rasp_statement(Parser *p, bool top);

/* raspstatementsList : raspstatement Comment? raspstatementsList? | Comment raspstatementsList?
 * (at least one), until a token that cannot continue it. */
static bool statements_list(Parser *p) {
    if (!sync_block(p, FIRST_BODY)) return FAIL;
    for (;;) {
        int t;
        if (!la(p, 1, &t)) return FAIL;
        if (t == T_COMMENT) p->pos++;
        else if (BIT(t) & FIRST_RASP) {
            if (!rasp_statement(p, false)) return FAIL;
        } else {
            return true;
        }
    }
}

/* funcDef : 'def' ID '(' idsList? ')' '{' commentsList? raspstatementsList? returnStatement
 *           commentsList? '}'      returnStatement : 'return' exprsList ';' */
static bool func_def(Parser *p) {
    p->pos++;
    if (!expect(p, T_ID, BIT(T_LP)) || !expect(p, T_LP, BIT(T_ID) | BIT(T_RP))) return FAIL;
    bool close;
    if (!sync_block(p, BIT(T_ID) | BIT(T_RP)) || !next_is(p, T_RP, &close)) return FAIL;
    if (!close && !ids_list(p, BIT(T_RP))) return FAIL;
    if (!expect(p, T_RP, BIT(T_LBRACE)) || !expect(p, T_LBRACE, FIRST_BODY | BIT(T_RETURN))) return FAIL;
    int t;
    if (!sync_block(p, FIRST_BODY | BIT(T_RETURN)) || !la(p, 1, &t)) return FAIL;
    if (t != T_RETURN && !statements_list(p)) return FAIL;
    if (!expect(p, T_RETURN, FIRST_EXPR) || !exprs_list(p) || !expect(p, T_SEMI, BIT(T_COMMENT) | BIT(T_RBRACE)))
        return FAIL;
    for (;;) {
        if (!la(p, 1, &t)) return FAIL;
        if (t != T_COMMENT) break;
        p->pos++;
    }
    return expect(p, T_RBRACE, FOLLOW_STMT);
}

/* forLoop : 'for' idsList 'in' expr '{' raspstatementsList '}' */
static bool for_loop(Parser *p) {
    p->pos++;
    if (!ids_list(p, BIT(T_IN)) || !expect(p, T_IN, FIRST_EXPR) || !expr(p) || !expect(p, T_LBRACE, FIRST_BODY) ||
        !statements_list(p))
        return FAIL;
    return expect(p, T_RBRACE, FOLLOW_STMT);
}

/* raspstatement : expr ';' | assign ';' | draw ';' | loadFile ';' | funcDef | forLoop
 * assign : idsList '=' exprsList      draw : 'draw' '(' expr (',' expr)? ')'
 * loadFile : 'load' String */
static bool rasp_statement(Parser *p, bool top) {
    int t1, t2;
    if (!la(p, 1, &t1)) return FAIL;
    size_t start = p->pos;
    SynResult *r = p->res;
    switch (t1) {
    case T_DEF: return func_def(p);
    case T_FOR: return for_loop(p);
    case T_LOAD:
        p->pos++;
        if (!expect(p, T_STRING, BIT(T_SEMI))) return FAIL;
        if (top) {
            const Tok *s = &p->toks[p->pos - 1];
            r->load_path = arena_strndup(p->a, p->text + s->start + 1, s->end - s->start - 2);
        }
        break;
    case T_DRAW: {
        p->pos++;
        if (!expect(p, T_LP, FIRST_EXPR)) return FAIL;
        for (size_t i = 0; i < 2; i++) {
            size_t from = p->pos;
            if (!expr(p)) return FAIL;
            if (top) r->expr[r->n_exprs++] = (SynSpan){p->toks[from].start, p->toks[p->pos - 1].end};
            bool comma;
            if (!next_is(p, T_COMMA, &comma)) return FAIL;
            if (!comma || i == 1) break;
            p->pos++;
        }
        if (!expect(p, T_RP, BIT(T_SEMI))) return FAIL;
        if (top) r->kind = SYN_DRAW;
        break;
    }
    case T_ID:
        if (!la(p, 2, &t2)) return FAIL;
        if (t2 == T_ASSIGN || t2 == T_COMMA) {
            if (!ids_list(p, BIT(T_ASSIGN)) || !expect(p, T_ASSIGN, FIRST_EXPR) || !exprs_list(p)) return FAIL;
        } else if ((BIT(t2) & EXPR_CONT) || t2 == T_SEMI) {
            if (!expr(p)) return FAIL;
        } else {
            return no_viable(p, start, start + 1);
        }
        break;
    default:
        if (!expr(p)) return FAIL;
        break;
    }
    return expect(p, T_SEMI, FOLLOW_STMT | BIT(T_COMMENT));
}

/* replstatement : setExample | showExample | toggleExample | toggleSeqVerbose | exit
 * setExample : 'set' ('s-op'|'selector')? 'example' expr
 * showExample : 'show' ('s-op'|'selector')? 'example'
 * toggleSeqVerbose : 'full seq display' ('on'|'off')
 * toggleExample : ('s-op'|'selector')? 'examples' ('on'|'off')
 * exit : 'exit()' | 'exit' | 'quit' | 'quit()' */
static bool repl_statement(Parser *p, bool top) {
    int t;
    la(p, 1, &t);
    SynResult *r = p->res;
    SynResult ignored;
    if (!top) r = &ignored;
    const TokSet end = BIT(T_EOF) | BIT(T_COMMENT) | FIRST_STMT;
    r->subset = SYN_BOTH;
    if (t == T_EXITP || t == T_EXIT || t == T_QUIT || t == T_QUITP) {
        p->pos++;
        r->kind = SYN_EXIT;
        return true;
    }
    if (t == T_FULLSEQ) {
        p->pos++;
        if (!expect_set(p, BIT(T_ON) | BIT(T_OFF), end)) return FAIL;
        r->kind = SYN_TOGGLE_VERBOSE;
        r->on = p->toks[p->pos - 1].type == T_ON;
        return true;
    }
    bool set = t == T_SET, show = t == T_SHOW;
    if (set || show) p->pos++;
    if (!la(p, 1, &t)) return FAIL;
    if (t == T_SOP || t == T_SELECTOR) {
        r->subset = t == T_SOP ? SYN_SOP : SYN_SELECTOR;
        p->pos++;
    }
    if (set || show) {
        if (!expect(p, T_EXAMPLE, set ? FIRST_EXPR : end)) return FAIL;
        r->kind = show ? SYN_SHOW_EXAMPLE : SYN_SET_EXAMPLE;
        if (show) return true;
        size_t from = p->pos;
        if (!expr(p)) return FAIL;
        r->expr[0] = (SynSpan){p->toks[from].start, p->toks[p->pos - 1].end};
        r->n_exprs = 1;
        return true;
    }
    if (!expect(p, T_EXAMPLES, BIT(T_ON) | BIT(T_OFF)) || !expect_set(p, BIT(T_ON) | BIT(T_OFF), end)) return FAIL;
    r->kind = SYN_TOGGLE_EXAMPLES;
    r->on = p->toks[p->pos - 1].type == T_ON;
    return true;
}

/* statement : raspstatement Comment? | replstatement Comment? | Comment */
static bool statement(Parser *p, bool top) {
    int t;
    if (!la(p, 1, &t)) return FAIL;
    size_t start = p->pos;
    if (t == T_COMMENT) {
        p->pos++;
        if (top) {
            p->res->kind = SYN_COMMENT;
            p->res->stmt = (SynSpan){p->toks[start].start, p->toks[start].end};
        }
        return true;
    }
    if (top) p->res->kind = SYN_RASP;
    bool ok = (BIT(t) & FIRST_REPL) ? repl_statement(p, top) : rasp_statement(p, top);
    if (!ok) return FAIL;
    if (top) p->res->stmt = (SynSpan){p->toks[start].start, p->toks[p->pos - 1].end};
    if (!la(p, 1, &t)) return FAIL;
    if (t == T_COMMENT) p->pos++;
    return true;
}

/* r : statement+? EOF */
SynResult syn_check(Arena *a, const char *text) {
    SynResult res;
    memset(&res, 0, sizeof res);
    Parser p = {a, text, NULL, 0, 0, 0, NULL, false, 0, &res};
    lex(&p);
    if (!sync_block(&p, FIRST_STMT)) return res;
    for (;;) {
        if (!statement(&p, res.n_statements == 0)) return res;
        res.n_statements++;
        int t;
        if (!la(&p, 1, &t)) return res;
        if (t == T_EOF) break;
        if (!(BIT(t) & FIRST_STMT)) { /* sync at the loop back: an unwanted token */
            res.status = SYN_ERROR;
            res.message = arena_printf(a, "extraneous input '%s' expecting %s", token_text(&p, p.pos),
                                       set_text(&p, BIT(T_EOF) | FIRST_STMT));
            return res;
        }
    }
    res.status = SYN_COMPLETE;
    return res;
}
