/* Private to codegen/: the lowering plan shared by the passes.
 *
 * Representation of s-ops in the residual stream. Every s-op x that the model needs is
 * available through one or both *views*, linear functionals of a residual row r:
 *   categorical view  cat[v](r) = 1 if x = value v at that position, else 0   (one per value)
 *   numerical view    num(r)    = x (as a double)
 * A view is a sparse list of (residual dim, coefficient) terms. Materialised s-ops own dims
 * (their view is a unit vector per dim); *virtual* s-ops own none: a map of one categorical
 * s-op has cat[w] = sum of cat[v] over v with f(v) = w, an affine map of numerical s-ops has an
 * affine numerical view, a constant is a multiple of the `one` dim. Since every consumer
 * (queries, keys, values, MLP inputs, readout) reads the residual linearly, virtual s-ops cost
 * no layers and no parameters.
 *
 * Time slots order the computation: 0 = embedding, 2l+1 = attention of layer l, 2l+2 = MLP of
 * layer l. An op is placed in the earliest slot of its kind after all its inputs (ASAP), which
 * makes the number of layers the dependency depth. */
#ifndef RASPCC_CODEGEN_INTERNAL_H
#define RASPCC_CODEGEN_INTERNAL_H

#include <math.h>

#include "codegen/codegen.h"
#include "support/diag.h"

/* Limits that keep compilation bounded; exceeding one is a located error, never a truncation. */
enum {
    CG_MAX_VALUES = 1 << 18,     /* values of one s-op */
    CG_MAX_GRID = 1 << 20,       /* argument combinations one map is tabulated over */
    /* Fusing a map into its consumer saves a layer but tabulates the consumer over a larger
     * grid (up to a hidden pair per point): fusion stops at this many points. */
    CG_MAX_FUSED_GRID = 1 << 14,
    CG_MAX_FUSED_SPAN = 1 << 22, /* the projection a table fused two maps deep steps along */
    CG_MAX_DIMS = 1 << 20,
    CG_MAX_WIDTH_TERMS = 3,      /* heads one selector_width may be decomposed into */
    CG_MAX_GRID_ARGS = 8,        /* scalar inputs of one tabulating MLP */
    CG_MAX_LEAVES = 6,           /* s-ops one tabulating MLP reads */
    CG_MAX_GATE = 256,           /* values of the gate of a gated map */
    CG_TOL_ATTEMPTS = 9,         /* analyses to find the share of --tol each real function gets */
    CG_TOL_COARSEN = 5,          /* when --tol is too fine to build, shares 16, 256, ... times coarser analysed */
    CG_TOL_COARSER = 3,          /* shares 16, 256, 4096 times coarser tried when none fits the limits */
    CG_TABLE_RETRIES = 8,        /* maps whose tables mlp.c refuses for rounding, retried one per attempt (codegen.c) */
    CG_MAX_JOINT = 4,            /* s-ops on one side of a selector read jointly (joint.c) */
    CG_MAX_JOINT_TUPLES = 4096,  /* value tuples of one such side */
    CG_MAX_JOINT_LEAVES = 8,     /* s-ops such a side is tabulated from (at most CG_MAX_LEAVES used) */
    /* A map whose fused tabulation grid is larger than this is gated when it can be (one MLP
     * of 2 units per gate value instead of one per grid change, but no fusion) */
    CG_GATE_WHEN_GRID = 1 << 12,
    /* Lengths up to which an output may decode against a value set per length (each length
     * reruns the value analysis) */
    CG_MAX_LEN_DECODE = 256,
    /* A width decomposed into several heads is made categorical in one MLP over the joint grid
     * of its terms while that grid is at most this large; beyond, in two steps (a numerical sum,
     * then a 1-D discretisation one layer later): one more layer, far fewer hidden units. */
    CG_MAX_WIDTH_JOINT = 1 << 14,
    /* Positional tables (positional.c): entries of all tables together, and comparisons spent
     * evaluating positional selectors at every length. Beyond, no tables (and less precision). */
    CG_MAX_POS_ENTRIES = 1 << 22,
    CG_MAX_POS_WORK = 1 << 30,
};

typedef struct Term {
    uint32_t dim;
    double coef;
} Term;

typedef struct LinView {
    Term *terms;
    size_t n;
} LinView;

/* Fixed residual dims. */
enum { DIM_ONE = 0, DIM_BOS = 1 };

/* The exact set of values an s-op can take, sorted by value_order and duplicate-free;
 * or `unbounded` when it is infinite or too large to enumerate. */
typedef struct ValueSet {
    Value *vals;
    size_t n;
    bool unbounded;
    bool numeric;       /* every value is a number (bools count) */
    bool all_int;       /* every value is an int or bool */
    /* The members are exact rationals and the reference's doubles lie within a few ulps of them
     * (combinations of means, see LinMean); lookups then match rounding twins. Otherwise every
     * member is exactly a double (or atom) the reference can produce. */
    bool approx;
    /* Numbers equal in value are one member (1, 1.0 and True): no consumer tells them apart
     * (valueset.c, kinds). Lookups compare numbers by value. */
    bool by_number;
    bool zero_signs;    /* with by_number: -0.0 and 0.0 stay two members (a consumer keeps the sign) */
} ValueSet;

/* c0 + sum_j coef[j] * agg[j], numerical aggregates that all average over one selector: the
 * combination is itself a mean over the same keys (of the combined sources), so its values are
 * those of one mean, not of the product of the means' value sets (Dyck's opens - closes). */
enum { LINMEAN_TERMS = 4 };
typedef struct LinMean {
    const IrNode *sel;
    double c0;
    bool float_c0;           /* some constant in c0 is a float (1.0): every value is a float */
    size_t n;
    double coef[LINMEAN_TERMS];
    const IrNode *agg[LINMEAN_TERMS];
} LinMean;

/* Affine form a*n + b*i + c over length n and index i, for proving selects total. */
typedef struct Affine {
    bool valid;
    double a, b, c;
} Affine;

/* How a positional s-op's value depends on the position i and the length n (positional.c). */
typedef enum PosDep { POS_CONST, POS_I, POS_N, POS_IN } PosDep;

/* The exact table of a positional s-op or selector over every length n = 1..N and position
 * i < n, at cell pos_at(n, i). */
typedef struct PosTable {
    PosDep dep;        /* s-ops */
    Value *val;        /* s-ops: the value */
    bool *fail;        /* the reference raises there (every cell of a length whose evaluation raised) */
    bool any_fail;
    int32_t *count;    /* selectors: keys selected for query i */
    bool *counts_seen; /* selectors: counts_seen[c] for c = 0..N */
    bool at_most_one;  /* selectors: never more than one key */
    uint8_t *keys;     /* selectors, for N <= CG_MAX_LEN_KEYS: bit k of row (n, i) at bit offset
                          pos_keys_at(n, i) + k: query i selects key k at length n */
} PosTable;

enum { CG_MAX_LEN_KEYS = 128 };
/* Offset of the key bits of query i at length n: sum over lengths m < n of m * m, plus i * n. */
static inline size_t pos_keys_at(size_t n, size_t i) { return (n - 1) * n * (2 * n - 1) / 6 + i * n; }
static inline bool pos_selects(const PosTable *t, size_t n, size_t i, size_t k) {
    size_t b = pos_keys_at(n, i) + k;
    return t->keys[b / 8] >> (b % 8) & 1;
}

static inline size_t pos_at(size_t n, size_t i) { return n * (n - 1) / 2 + i; }

/* A map f(g, y) that is affine in a numerical y for each of the few values g_v of g:
 * f = a_v y + b_v, computed as sum_v e_v (a_v y + b_v) with the one-hot e of g (classify.c
 * finds it, mlp.c builds it: two hidden units per value). Products by a positional factor
 * (k * sum), conditionals (y if c else 0) and sums of gated terms compile this way. */
typedef struct Gated {
    const IrNode *gate, *y;
    size_t n;          /* values of the gate */
    double *a, *b;     /* per gate value */
    double bound;      /* max |a_v y + b_v| over the grid */
    /* `y if gate else y2` between two numbers: where on_y2[v], gate value v reads y2 instead */
    const IrNode *y2;
    bool *on_y2;
} Gated;

/* A map computed as a switch (switch.c): for each case, a set of allowed values for some of its
 * gates (s-ops of at most 64 values read through one-hot views; the cases are the leaves of a
 * decision tree over them, so they partition every assignment), a step function of at most one of
 * its numeric leaves. */
enum { SW_MAX_LEAVES = 32, SW_MAX_GATE_VALUES = 64 };
#define SW_OPEN UINT64_MAX /* a case that leaves a gate open: any of its values */
typedef struct Switch {
    uint32_t n_gates, n_xs;
    const IrNode *gates[SW_MAX_LEAVES], *xs[SW_MAX_LEAVES];
    bool gate_by_num[SW_MAX_LEAVES]; /* a gate of two numbers read through its numerical view */
    uint32_t gate_base[SW_MAX_LEAVES]; /* gate i's value v has view gate_base[i] + v (MlpOp.gate_views) */
    size_t n_cases;
    uint64_t *gate_val;   /* case c, gate i: the values it allows (bit v: the gate's v-th value),
                             SW_OPEN for any, at [c * n_gates + i] */
    int32_t *x_of;        /* per case: the numeric leaf it reads, or -1 (a constant) */
    uint32_t *first;      /* per case: its value (index in the map's set) at that leaf's least value */
    size_t *step_start;   /* per case: its steps, [step_start[c], step_start[c + 1]) */
    double *step_lo, *step_hi; /* the consecutive values of the leaf the value changes between */
    uint32_t *step_to;    /* the value after the step */
    double x_max[SW_MAX_LEAVES];
    /* a width or length read through its head's u = 1/(w + 1) (as -u, which grows with w): its
     * own number comes one MLP later */
    bool x_u[SW_MAX_LEAVES];
    size_t units;         /* hidden units: a case's first value and two per step */
} Switch;

/* An interval [lo, hi] (realfn.c rounds its arithmetic outward). */
typedef struct Ival {
    double lo, hi;
} Ival;

/* Elementary functions the compiler approximates for its own lowerings (realfn_build_elem). */
typedef enum RealElem { RE_NONE, RE_LN_ABS, RE_EXP } RealElem;

/* A function of one real s-op as a continuous piecewise-linear function through knots
 * (kx[i], ky[i]), within err of the function outside margins around its jumps (realfn.c). */
typedef struct RealFn {
    size_t n_knots;
    double *kx, *ky;
    double *kmid;          /* kmid[i + 1]: f at the middle of piece [kx[i], kx[i+1]], through which it
                              is a quadratic (gated MLPs), or NAN: a chord */
    bool quadratic;        /* some piece is a quadratic */
    size_t n_jumps;
    double *jump_at;       /* where the function jumps: the model checks the argument is not near */
    double err;            /* |approximation - f| outside the margins */
    bool relative;         /* f keeps one sign: err is relative, |approximation - f| <= err |f| */
    double lip;            /* |f(x) - f(y)| <= lip |x - y| within a piece */
    double log_lip;        /* relative: |ln|f(x)| - ln|f(y)|| <= log_lip |x - y| within a piece */
    double elasticity;     /* relative, x of one sign: |ln|f(x)| - ln|f(y)|| <= elasticity |ln|x| - ln|y||
                              within a piece (INFINITY when x's interval holds 0) */
    double sum_mag;        /* the MLP's terms |ky_0| + sum |slope change| |x - kx_i| at most this
                              (the scale of its float64 rounding) */
    bool from_right;       /* the MLP sums terms ReLU(kx_i - x) from the last knot (realfn_mirror):
                              smaller where f bends most near its left end (ln x, 1 / x) */
    bool one_dim;          /* its argument is one residual dim (not a sum of several): each unit's
                              input x - k is then rounded once, relative to itself (reals.c) */
    double against_mag;    /* the terms whose sign is not ky_0's at most this (INFINITY where ky_0
                              is 0): the terms' magnitudes add up to at most |f| + 2 against_mag,
                              a rounding relative to f where it is small (exp, 1 / x) */
    Ival range;            /* the function's values */
    bool constant_pieces;  /* constant between jumps (comparisons, round): finitely many values */
} RealFn;

/* The finest share of --tol worth analysing when --tol itself cannot be built: float64 resolves
 * about 1e-16 of a value, and no function's pieces get finer than that usefully. */
#define CG_TOL_FINEST 1e-14

/* A square u^2 by chords in `depth` MLPs (squares.c): level 0 the chords at spacing h1 and the
 * sawtooth tri(u / h1), each later level refines the spacing k-fold; the levels add up to the
 * chords at h = h1 / k^(depth - 1), within h^2 / 4 of u^2. depth 1: one MLP (h1 = h); 0: too
 * fine to build. */
typedef struct SquareLevels {
    int depth;
    double h, h1;
    uint32_t k;
} SquareLevels;
/* one MLP while it takes at most this many knots each way from 0; else the fewest levels (up to
 * SQ_MAX_DEPTH): SQ_FIRST_STEPS knots each way at level 0, SQ_REFINE-fold finer at each next */
enum { SQ_ONE_LAYER_STEPS = 1 << 12, SQ_MAX_DEPTH = 5, SQ_FIRST_STEPS = 64, SQ_REFINE = 1024 };
/* The levels for |u| <= U within tol (h = 2 sqrt(tol)); one MLP unless deep (Plan.deep_squares). */
SquareLevels square_levels(double U, double tol, bool deep);
/* The float64 rounding the levels after the first add to one square for |u| <= U (level 0's
 * chords are reals.c's squares_rounding at spacing h1). */
double square_levels_rounding(const SquareLevels *sq, double U);


/* How a real s-op is computed, with the interval of its values and the bound on the model's
 * error (reals.c). */
typedef enum RealHow {
    REAL_INPUT, REAL_AFFINE, REAL_MEAN, REAL_COPY, REAL_FN, REAL_PRODUCT, REAL_QUOTIENT, REAL_LOGPROD, REAL_GATED,
    REAL_REFUSED
} RealHow;
typedef struct RealInfo {
    RealHow how;
    Ival range;            /* every value the reference computes */
    double err, rel;       /* |model - reference| <= err + rel |reference| */
    RealFn fn;             /* REAL_FN: f of arg; REAL_QUOTIENT: 1 / arg (the divisor) */
    const IrNode *arg;     /* REAL_FN, REAL_QUOTIENT: the real argument */
    double fn_margin;      /* REAL_FN: the margin fn was built with around its jumps (checked as wide) */
    Ival recip_range;      /* REAL_QUOTIENT: where the model's 1 / divisor lies */
    double zero_hole;      /* REAL_QUOTIENT: > 0 when the divisor is finite and holds 0, its other
                              values at least this far from it: the model refuses it within half */
    bool split;            /* REAL_QUOTIENT with a zero hole: 1 / y = fn(t+) + fn_y(t-) for
                              t+ = ReLU(y) + K ReLU(-y), t- = ReLU(-y) + K ReLU(y) (K = split_k),
                              fn = 1 / t and fn_y = -1 / t, exactly 0 from split_at on (the other
                              side's t); n_knots 0: no values on that side */
    double split_k, split_at;
    RealFn fn_y, fn_exp;   /* REAL_LOGPROD: fn = ln|x|, fn_y = ln|y|, fn_exp = +-exp(ln|x| +- ln|y|) */
    bool divide;           /* REAL_LOGPROD: x / y (else x * y) */
    const IrNode *arg_y;   /* REAL_LOGPROD: what fn_y reads (fn reads arg) */
    Ival *cell;            /* per (i, n) cell of the positional analysis, where the s-op's value
                              lies there (empty: lo > hi), when positions tell more than range */
    double *cell_err;      /* with cell: the absolute part of the error there (err is their max) */
    const char *why;       /* REAL_REFUSED: why no bound can be given */
    const ValueSet *finite; /* a finite s-op computed as a real: the reference's values, else NULL */
    SquareLevels sq;       /* REAL_PRODUCT, REAL_QUOTIENT with ReLU MLPs: the squares' levels */
} RealInfo;

/* One side of a selector read jointly (joint.c): its s-ops and the one-hot of their tuple of
 * values, tuple t holding member i's value number (t / stride[i]) % |values_i|. */
typedef struct Joint {
    size_t n_members;
    const IrNode *members[CG_MAX_JOINT];
    size_t n_leaves;           /* what its MLP reads (the members, or what they are computed from) */
    const IrNode *leaves[CG_MAX_JOINT_LEAVES];
    size_t stride[CG_MAX_JOINT];
    size_t n_tuples;
    LinView *cat;
    int time;
} Joint;

typedef struct SopInfo {
    const IrNode *node;
    bool reachable;
    ValueSet vs;
    Affine affine;
    LinMean *linmean; /* when the s-op is such a combination (valueset.c), else NULL */
    PosTable *pos;    /* positional s-ops and selectors (positional.c), else NULL */
    /* Where the s-op can differ from the constant `rest`: a cell set over (n, i) as in PosTable,
     * or NULL (anywhere). An aggregate over a positional selector is its default wherever the
     * selector selects nothing; sums of such terms with disjoint supports take the union of
     * their terms' values, not the product (valueset.c). */
    bool *support;
    Value rest;
    /* a positional s-op whose value depends on the index alone (or on nothing) and never raises:
     * its views are sums over the index one-hot, free (classify.c) */
    bool pos_free;
    /* a finite product or quotient whose one reader divides by it, and whose values are rounded
     * two ways (S / n * n): computed as a real within a bound, not tabulated exactly (reals.c) */
    bool as_real;
    bool kind_matters; /* some consumer tells 1, 1.0 and True apart (valueset.c) */
    bool zero_sign_matters; /* some consumer tells -0.0 from 0.0 (valueset.c) */
    /* A positional s-op q that select(indices, q, ==) reads (selector.c): t = q where q is an
     * index (an integral number >= 0), else 0; and the BOS score t^2 - 1/2 (valid) or 1/2. */
    bool want_target, has_target;
    LinView target, target_bos;
    int target_time;
    /* kinds.c: the kind block of a number whose kinds collide (1 and 1.0) where that matters */
    bool want_kind, has_kind, kind_block; /* kind_block: unit views on [kind_dim, +n_kinds) */
    uint32_t n_kinds, kind_dim;
    ValueKind kinds[3];          /* ascending: bool, int, float (those present) */
    LinView kind_cat[3];
    int kind_time;
    bool has_cat, has_num;
    LinView *cat;     /* vs.n views when has_cat */
    LinView num;      /* when has_num */
    int time;         /* slot at which the views are available */
    bool want_cat;    /* some consumer needs the categorical view */
    bool want_num;    /* some consumer reads the numerical view */
    bool cat_block;   /* cat views are unit vectors on contiguous dims [cat_dim, cat_dim + vs.n) */
    uint32_t cat_dim;
    bool may_fail;    /* a value combination of a map raises: output is checked one-hot */
    bool needed;      /* some consumer (or the readout) reads one of its views */
    /* selector_width / length: the head's output u = 1/(width+1), which consumer MLPs read
     * directly (fusing the width's own discretisation into theirs saves a layer) */
    bool has_u;
    uint32_t n_u;            /* width = sum_i u_coef[i] * lambda (1/u_i - 1) */
    uint32_t u_dims[CG_MAX_WIDTH_TERMS];
    double u_coef[CG_MAX_WIDTH_TERMS];
    double u_lambda;         /* BOS's weight in the heads: u_i = lambda / (lambda + w_i) */
    int u_time;
    /* MAP_MLP: the s-ops the MLP reads. Chains of tabulated maps are fused: a leaf is a
     * non-map s-op, a map whose views are free, or a map that could not be fused further. */
    const IrNode *leaves[CG_MAX_LEAVES];
    uint32_t n_leaves;
    bool costly_known, costly; /* memo of classify.c costly() */
    bool est_known[2];         /* memo of classify.c est_time() (as a value, as an MLP leaf) */
    int est[2];
    size_t n_terms;            /* memo of classify.c width_terms() */
    double bos_weight;         /* memo of width_bos_weight() (0: not yet) */
    /* A heavy view (selector_width through a heavy BOS, or an affine map of such widths and free
     * views, MAP_AFFINE): `heavy` is within heavy_dev of the value, from heavy_time on; tables
     * read it as one input (GridArg.dev) where they would read the width's terms or the map's
     * arguments jointly. want_heavy: some table reads the map so (demand.c). */
    bool want_heavy, has_heavy;
    LinView heavy;
    double heavy_dev;
    int heavy_time;
    Gated *gated;              /* MAP_GATED */
    struct Switch *sw;         /* MAP_SWITCH */
    RealInfo *real;            /* a real-valued s-op (reals.c), else NULL */
    const char *label;         /* its name in labels and messages where several s-ops share its name */
    RealInfo *real_fn;         /* a finite-valued function of a real s-op (a comparison, a round) */
    bool has_mlp_leaves;       /* a map tabulated by an MLP of its own (MAP_MLP), from `leaves` */
    bool table_over_gate;      /* tabulated where the size rule gates it (Plan.tables_first) */
    const IrNode *cat_src;     /* MAP_UNARY_CAT: the one s-op it is a function of (through views of it) */
    bool count_known;          /* memo of agg_count_by_index */
    const int32_t *count_by_index;
    /* a select(K, Q, ==) of numbers (numeq.c): analysed once (numeq_known); NULL: one-hot tables */
    bool numeq_known;
    struct NumEq *numeq;
} SopInfo;

typedef enum MapClass { MAP_UNARY_CAT, MAP_AFFINE, MAP_MLP, MAP_POS_FREE, MAP_GATED, MAP_REAL, MAP_SWITCH } MapClass;



/* One column of an attention head's score: score += (q . r_query) * (k . r_key). */
typedef struct ScoreColumn {
    LinView q, k;
} ScoreColumn;

typedef struct HeadOp {
    int layer;
    double tie_tol;            /* absolute: half the smallest gap between distinct scores */
    const IrNode *node;        /* aggregate, selector_width or length node */
    ScoreColumn *cols;
    size_t n_cols;
    double bos_level;          /* score of the BOS key for non-BOS queries */
    LinView bos_q;             /* or, when not empty, that score as a view of the query row */
    double bos_extra;          /* BOS counts as 1 + bos_extra keys in the mean (ModelHead) */
    bool causal;               /* keys after the query are masked (ModelHead.causal) */
    /* value columns: column j reads vals[j] and writes out_dims[j] */
    LinView *vals;
    double *bos_value;         /* value the BOS position must contribute per column */
    uint32_t *out_dims;
    size_t n_vals;
    const char *label;
} HeadOp;

/* One scalar input of a tabulating MLP: a linear view and the finite list of values it takes,
 * ascending. */
typedef struct GridArg {
    LinView view;
    size_t n;
    double *scalar;
    const LinView *onehot; /* n exact one-hot views (embedding blocks), when the input can gate */
    /* How far the view may lie from the listed value, beyond rounding (a width read through a
     * heavy BOS: within 1/8); mlp.c puts such an input fastest, on steps 1 apart. */
    double dev;
} GridArg;

/* How a leaf s-op's value is recovered from grid indices: directly (the leaf's value set is
 * the grid axis, in order), or as a decomposed width sum coef_i * w_i where axis args[i]
 * enumerates w_i = base_i .. N (base 1 for length, which is never 0). */
typedef struct LeafMap {
    const IrNode *node;                 /* the leaf s-op */
    bool has_kind_axis;                 /* a second input: the leaf's kind block (kinds.c) */
    uint32_t kind_arg;                  /* its axis, enumerating kinds[0..] */
    const ValueKind *kinds;
    bool vs_zero;                       /* width: 0 counts as reachable too (vs holds 1..N) */
    bool width;
    uint32_t arg;                       /* direct */
    const ValueSet *vs;                 /* direct: value at each grid index */
    uint32_t n_u;
    uint32_t args[CG_MAX_WIDTH_TERMS];  /* width: axis of term i enumerates w_i = base_i + index */
    double coef[CG_MAX_WIDTH_TERMS];
    double base[CG_MAX_WIDTH_TERMS];
} LeafMap;

/* A map tabulated by an MLP: f(leaves) over the grid of its scalar inputs, combined into one
 * projection p whose order is lexicographic. */
typedef struct MlpOp {
    int layer;
    const IrNode *node;        /* the map (or the node being converted) */
    size_t n_grid;
    GridArg grid[CG_MAX_GRID_ARGS];
    size_t n_leaves;
    LeafMap leaf[CG_MAX_LEAVES];
    const IrNode *const *leaves; /* MLP_FN_MAP: the leaf s-ops (the node's fused leaves) */
    int fn;                    /* MLP_FN_* */
    bool kind_of;              /* the output is the kind of the result (a kind block, kinds.c) */
    const PosTable *table;     /* MLP_FN_TABLE */
    /* MLP_FN_GATED: sum_v e_v (a_v y + b_v) from the gate's one-hot views and y's view */
    const Gated *gated;
    const Joint *joint;        /* MLP_FN_JOINT */
    const RealFn *pwl;         /* MLP_FN_PWL: the function of x_view */
    LinView x_view;            /* MLP_FN_PWL, MLP_FN_PRODUCT (with y_view) */
    Ival x_range, y_range;     /* MLP_FN_PRODUCT: where x and y lie */
    const LinView *gate_views;
    LinView y_view;
    LinView y2_view;           /* MLP_FN_GATED with Gated.y2 */
    const Switch *sw;          /* MLP_FN_SWITCH, with gate_views and x_views (per numeric leaf: its
                                  number, or -u where x_u) */
    const LinView *x_views;
    const bool *x_u;
    /* MLP_FN_GATED, the divisor of a quotient by sign (reals.c split_recip): also t+ = ReLU(y) +
     * split_k ReLU(-y) into split_dim[0] and t- = ReLU(-y) + split_k ReLU(y) into split_dim[1] */
    bool split;
    uint32_t split_dim[2];
    double split_k;
    /* MLP_FN_PRODUCT (level 0) and MLP_FN_SQUARE_LEVEL (level `level` >= 1) of squares by depth
     * (squares.c): x_view and y_view are, at a later level, the two squares' w_level dims;
     * sq_next their w_(level+1) dims (none at the last level; UINT32_MAX for the square of
     * x - x in x * x, exactly 0) */
    const SquareLevels *sq;
    int level;
    uint32_t sq_next[2];
    /* a table of a number (MLP_FN_MAP, _IDENTITY, _TABLE) that also writes v^2 for its value v
     * into beside_dim: a square for a numerical equality (numeq.c), from the same units */
    bool beside;
    uint32_t beside_dim;
    /* output: categorical block or a numerical dim */
    bool out_cat;
    const ValueSet *out_vs;
    uint32_t out_dim;
} MlpOp;

enum {
    MLP_FN_MAP,           /* the node's map over its leaves (plan_fused_apply) */
    MLP_FN_IDENTITY,      /* the value of leaf 0 */
    MLP_FN_AGG_KIND,      /* an aggregate's kind from its number of keys (leaf 0, a width) */
    MLP_FN_KIND_IDENTITY, /* the kind on leaf 0's kind axis */
    MLP_FN_TABLE,         /* MlpOp.table at the index and length leaves 0 and 1 (or the length leaf 0) */
    MLP_FN_GATED,         /* MlpOp.gated (numerical output) */
    MLP_FN_JOINT,         /* the index of the leaves' tuple of values in MlpOp.joint */
    MLP_FN_PWL,           /* MlpOp.pwl of x_view (realfn.c) */
    MLP_FN_PRODUCT,       /* x_view * y_view: two squares, or exact in a gated MLP */
    MLP_FN_PWL_PRODUCT,   /* x_view * pwl(y_view), a gated MLP (x / y with --mlp gated) */
    MLP_FN_SQUARE_LEVEL,  /* a later level of MLP_FN_PRODUCT's squares (MlpOp.sq), added to its dim */
    MLP_FN_SWITCH,        /* MlpOp.sw (switch.c), a categorical output */
};

/* A margin check (reals.c): the view must stay more than `margin` away from each threshold,
 * after the layer that computes it. */
typedef struct PlanMargin {
    LinView view;
    const double *thresholds;
    size_t n;
    double margin;
    const IrNode *node;
    int after_slot;
} PlanMargin;

typedef struct Plan {
    const IrGraph *g;
    Arena *arena;              /* scratch for the plan (the model has its own) */
    DiagList *diags;
    size_t max_len;
    Value *vocab;
    size_t n_vocab;
    IrTokenType token_type;
    bool numeric_tokens;       /* real-valued tokens in [token_lo, token_hi] (--range) */
    double token_lo, token_hi;
    SopInfo *info;             /* per node id */
    const IrNode *indices, *length; /* always in the graph (rewrite.c), always reachable */
    bool have_pos;             /* positional tables were computed (positional.c) */
    bool numbers_only;         /* CodegenOptions.numbers_only */
    bool plain_heads;          /* CodegenOptions.plain_heads: no causal head, no heavy BOS */
    bool values_again;         /* reals.c marked an s-op as_real: valueset.c runs its pass again */
    double real_tol;           /* --tol: error of one approximated real function */
    double real_margin;        /* --margin: around a jump of a function of reals, no exact answer */
    bool gated_mlp;            /* --mlp gated: exact products in gated (bilinear) MLPs */
    bool deep_squares;         /* products' squares by depth where one MLP takes too many knots (squares.c) */
    bool switches;             /* classify.c may compute maps as switches (switch.c) */
    /* Tables first (classify.c): a large or rounding-prone table is gated only where that costs
     * no slot; mlp.c's own rounding check decides the rest. A map it refuses goes back to the
     * size rule (unfused leaves, gated when large) on the next attempt (codegen.c); so does the
     * largest map of an MLP past --max-mlp or --max-bytes (emit.c), if it is such a table. */
    bool tables_first;
    bool plain_widths;         /* no heavy BOS (width_bos_weight 1 everywhere); */
    bool used_heavy;           /* some width weighed BOS heavily (codegen.c compares without) */
    const bool *size_rule;     /* per node id (n_size_rule of them): maps that take the size rule */
    size_t n_size_rule;
    bool table_over_gate;      /* a table was kept where the size rule gates (tables first differs) */
    uint32_t table_refused;    /* 1 + id of the map whose table was refused (rounding, limits); 0: none */
    unsigned *kinds_possible;  /* per node id: the ValueKinds it can hold, as bits (valueset.c) */
    size_t max_mlp, max_bytes; /* the limits (CodegenOptions) */
    double weight_bytes;       /* dense bytes of the weights emitted so far */
    /* The lengths the value analysis covers: 1..max_len, or one length for the value sets of
     * the output at that length (valueset.c, vs_output_at_length). */
    size_t win_lo, win_hi;
    const IrNode *output;      /* the s-op compiled (plan_build) */
    const ValueSet *out_by_len; /* when the output decodes per length: [n - 1] for n = 1..max_len */
    const ValueSet *len_sets;  /* the output's value set at each length, once computed (vs_output_sets) */
    uint32_t n_dims;
    char **labels;             /* per dim, grown as dims are allocated */
    size_t labels_cap;
    uint32_t tok_dim, pos_dim; /* first dim of the token and position blocks */
    HeadOp *heads;
    size_t n_heads, heads_cap;
    MlpOp *mlps;
    size_t n_mlps, mlps_cap;
    ModelCheck *checks;
    size_t n_checks, checks_cap;
    PlanMargin *margins;
    size_t n_margins, margins_cap;
    int n_layers;
} Plan;

/* ======== The passes, in order. A pass calls only the passes above it (and linview.c). ======== */

/* linview.c: sparse linear functionals of a residual row */
LinView lv_unit(Arena *a, uint32_t dim, double coef);
LinView lv_empty(void);
/* a*x + b*y, merging terms and dropping zeros */
LinView lv_combine(Arena *a, double alpha, LinView x, double beta, LinView y);
double lv_eval(LinView v, const double *row);
/* A sum of many views, built in one pass (repeated lv_combine would copy it each time): add
 * coef * v terms to the builder (heap scratch), then lvb_done merges them into the arena. */
typedef struct LvBuild {
    Term *t;
    size_t n, cap;
} LvBuild;
void lvb_add(LvBuild *b, double coef, LinView v);
LinView lvb_done(Arena *a, LvBuild *b);

/* Time slots: 0 the embedding, 2l+1 the attention of layer l, 2l+2 its MLP. */
static inline int next_slot(int after, bool attention) {
    int s = after + 1;
    if (attention ? (s % 2 == 0) : (s % 2 == 1)) s++;
    return s;
}
static inline int slot_layer(int slot) { return (slot - 1) / 2; }

/* 1. rewrite.c: copies the part of `src` that `out` depends on into `dst` (an empty graph),
 * simplified (see the file); returns the copy of `out`. */
const IrNode *rewrite_program(const IrGraph *src, const IrNode *out, size_t max_len, IrGraph *dst);

/* 2. positional.c: tables of the reachable positional s-ops and selectors (after reachability) */
bool pos_compute(Plan *p, const IrNode *out);
ValueSet pos_value_set(Plan *p, const PosTable *t);
/* How a table's atoms depend on the index and the length. */
PosDep pos_classify(const PosTable *t, size_t max_len);
/* The value at (i, n); false when the cell does not exist or raises. */
bool pos_lookup(const PosTable *t, int64_t i, int64_t n, size_t max_len, Value *v);
/* Whether a selector never selects more than one key (by its form, or its positional table). */
bool selector_at_most_one(Plan *p, const IrNode *sel);
/* Whether every query of sel selects its own position or nothing, at every length (a head's
 * copy, fresh_if); *always: its own position everywhere. */
bool selector_self_or_none(const Plan *p, const IrNode *sel, bool *always);
/* Whether positional selector sel selects no key at any position of any length (its table). */
bool selector_never_selects(const Plan *p, const IrNode *sel);
/* Whether s-op x has the same value at every position of a sequence (length, constants, means over
 * a selector that ignores its queries, maps of such): a proof, false when unsure. */
bool pos_uniform(Plan *p, const IrNode *x);

/* vset.c: value sets as data (no analysis), read by every pass from valueset.c on */
/* value_order that also tells -0.0 from 0.0 (the order of value sets). */
int atom_order(Value a, Value b);
/* Sorts and deduplicates vals[0..n) in place (a set of exact atoms). */
ValueSet vs_from_values(Value *vals, size_t n);
/* How a set orders (and identifies) its members: atom_order, or by number for a collapsed set. */
int vs_member_order(const ValueSet *vs, Value a, Value b);
bool vs_negative_zero(Value v);
bool vs_contains(const ValueSet *vs, Value v, size_t *index);
/* Whether a numerical encoding of the s-op can be read back exactly: finite, numbers only, no
 * two members equal as numbers (1 and 1.0) unless with_kinds (a kind block tells them apart),
 * distinct numbers at least 1e-9 of their magnitude apart; *gap gets the smallest distance
 * between distinct numbers. */
bool vs_decodable(const ValueSet *vs, bool with_kinds, double *gap);
/* The gap a set of one number (of magnitude mag) is read with: 1, or 1e-6 of it where a sum that
 * reaches it rounds by units (2^53 - 1 - 1.0 in one step of a view). */
double vs_single_gap(double mag);
/* Whether the set holds equal numbers of different kinds (1 and 1.0) / strings and non-strings. */
bool vs_kind_collisions(const ValueSet *vs);
/* (vset.c) Map n's value where s-op x, from which every non-constant argument of n is computed through
 * maps (x itself, or a map of x alone), has value v; !ok where n raises or n is not such a map. */
ValueResult map_value_via(Plan *p, const IrNode *n, const IrNode *x, Value v, char *msg, size_t msgsize);
bool vs_mixed_kinds(const ValueSet *vs);
/* Numbers that differ only by rounding: the same rational reached along different paths. */
bool scalar_twins(double a, double b);
/* Whether a numerical view cannot carry every member of vs exactly: an int past 2^53, two
 * distinct numbers that are rounding twins (2.9999999999999996 and 3.0; an exact set only), or
 * -0.0 and 0.0. */
bool vs_inexact_as_numbers(const ValueSet *vs);
/* The least gap between distinct numbers of a set of numbers that a consumer tells apart
 * (INFINITY for fewer than two): tables and the readout refuse numbers closer than 1e-9 of the
 * set's magnitude (vs_decodable, mlp.c), so a superset's nearer spurious twins (combinations that
 * never occur together) count as that; with twins_are_one, rounding twins (one number, read per
 * length) do not count at all. *mag (when not NULL) gets the magnitude. */
double vs_resolved_gap(const ValueSet *vs, bool twins_are_one, double *mag);
/* The gap one readout of per-length sets sets[count] (the output's, read at the input's length)
 * tells apart: the least vs_resolved_gap of any set of two or more numbers, or, when every set
 * holds one number or none, vs_single_gap of the largest magnitude (*mag, when not NULL). The
 * readout's margin is a quarter of it (emit.c). */
double vs_len_sets_gap(const ValueSet *sets, size_t count, bool twins_are_one, double *mag);
/* "'name'" or "this <kind>", for messages about s-op n. */
void vs_describe(const IrNode *n, char *buf, size_t size);

/* 3. valueset.c: value sets (with positional tables, supports, kinds) */
bool vs_compute(Plan *p, const IrNode *out);
/* The value sets of the output at each length n = 1..N, into out[n - 1]: the whole analysis
 * rerun on one length at a time. Nothing else changes. */
void vs_output_by_length(Plan *p, const IrNode *out, ValueSet *by_len);
/* Whether the output `out`, a finite set of numbers not decodable from one value set (rounding
 * twins), is from the value set of each length: the sets (computed once, kept in
 * p->len_sets), or NULL. Up to CG_MAX_LEN_DECODE only. */
const ValueSet *vs_output_sets(Plan *p, const IrNode *out);
/* For the output, when it can be read per length: the least vs_resolved_gap over the lengths'
 * sets; INFINITY for any other s-op. */
double vs_output_resolved_gap(Plan *p, const IrNode *n, bool twins_are_one);
/* An aggregate over a positional selector whose number of keys depends on the index alone:
 * that number per index (NULL otherwise); whether it can take v when it selects k keys; and
 * about how many values it then takes (for cost estimates). A tabulation reading the index and
 * such an aggregate skips the pairs that never occur (Dyck's prefix counts). */
const int32_t *agg_count_by_index(Plan *p, const IrNode *agg);
bool agg_value_possible(Plan *p, const IrNode *agg, Value v, int32_t k);
double agg_values_with_count(Plan *p, const IrNode *agg, int32_t k);
/* The kinds (bool, int, float, ascending) an s-op's numbers take; their count. */
uint32_t sop_kinds(Plan *p, const IrNode *x, ValueKind kinds[3]);
/* Why n's value set is unbounded, as a clause to append to an error ("; ..."). */
const char *vs_unbounded_why(Plan *p, const IrNode *n);

/* 3b. realfn.c and reals.c: real-valued s-ops (called by valueset.c per node). With quadratic,
 * pieces may be quadratics through three points (a gated MLP computes them). */
bool realfn_build(Plan *p, const IrNode *map, const IrNode *leaf, Ival X, double tol, double margin, bool quadratic,
                  RealFn *out, char *why, size_t whysize);
/* g(u) = f(-u) (knots negated and reversed): the MLP of a function summed from the right is that
 * of its mirror, reading -x. */
RealFn realfn_mirror(Plan *p, const RealFn *f);
/* -f in place: knots, and the middles of quadratic pieces (which bend the other way), negated. The
 * terms keep their one sign (against_mag, from_right and sum_mag stand). */
void realfn_negate(Plan *p, RealFn *f);
/* Sums f's MLP terms from its left end (from_right false: constant left of the first knot) or
 * its right end, whatever rounds less: a function built up to a domain edge keeps its model flat
 * past the edge, where its steepest chord would carry the argument's error. */
void realfn_set_anchor(Plan *p, RealFn *f, Ival X, bool from_right);
/* The most fn's model (chords) changes between an x in X and any x' within e of it (its modulus of
 * continuity there, through its total variation over windows of width 2 e): where f's slope is
 * unbounded (a root at 0) it is about sqrt(e) where lip e is useless. INFINITY for quadratic
 * pieces (not computed). */
double realfn_modulus(Plan *p, const RealFn *f, Ival X, double e);
/* g (over [a, b]) with a chord from its last knot to (T, 0), T > b, summed from T: every unit is
 * ReLU(k - t) with k <= T, so for t >= T the sum is exactly 0 (a divisor's other side, reals.c
 * split_recip); sum_mag and against_mag are over [a, T]. */
RealFn realfn_zero_beyond(Plan *p, const RealFn *g, double T);
/* Piece i of fn as ky[i] + slope (x - kx[i]) + curv (x - kx[i])^2 (a chord where kmid is NAN). */
typedef struct RealPiece {
    double slope, curv;
} RealPiece;
static inline RealPiece realfn_piece(const RealFn *fn, size_t i) {
    double h = fn->kx[i + 1] - fn->kx[i], s = (fn->ky[i + 1] - fn->ky[i]) / h, ym = fn->kmid ? fn->kmid[i + 1] : NAN;
    double c = isnan(ym) ? 0 : (ym - (fn->ky[i] + fn->ky[i + 1]) / 2) / (-h * h / 4);
    return (RealPiece){s - c * h, c};
}
/* The same for an elementary function of the compiler's own (products in the log domain): of x
 * (map NULL), or of the map (a function of leaf without jumps). */
bool realfn_build_elem(Plan *p, RealElem elem, const IrNode *map, const IrNode *leaf, Ival X, double tol, RealFn *out,
                       char *why, size_t whysize);
/* The map subtree n at leaf = x (a float), as the reference computes it. */
ValueResult realfn_eval(Plan *p, const IrNode *n, const IrNode *leaf, double x, char *msg, size_t msgsize);
bool reals_node(Plan *p, SopInfo *info);

/* The largest |model - reference| of a real s-op, its relative part taken at its largest value. */
static inline double real_abs_err(const RealInfo *r) {
    return r->err + r->rel * fmax(fabs(r->range.lo), fabs(r->range.hi));
}

/* 4. selterms.c: selector analysis. Selectors as signed sums of "terms", each an `and` of
 * single-pair conjuncts (inclusion-exclusion); the pair of s-ops a subtree reads (constants
 * aside); its truth for a key and a query value; the s-ops one side reads; index matches. */
typedef struct SelTerm {
    double coef;
    const IrNode **conj; /* conjuncts; none = the full selector */
    size_t n_conj;
} SelTerm;
bool selector_terms(Plan *p, const IrNode *sel, SelTerm **terms, size_t *n);
bool selector_single_pair(const IrNode *sel, const IrNode **keys, const IrNode **queries);
bool selector_formula(const IrNode *sel, Value k, Value q, bool *ok);
void selector_side(const IrNode *sel, bool keys, Joint *j);
/* select(indices, q, ==) read as an index match: q provably an index (IM_TOTAL: q's numerical
 * view), or a positional q that may not be one (IM_POSITIONAL: q's target features), or not. */
typedef enum IndexMatch { IM_NONE, IM_TOTAL, IM_POSITIONAL } IndexMatch;
IndexMatch selector_index_match(Plan *p, const IrNode *sel, bool for_width);
bool selector_total_index_match(Plan *p, const IrNode *sel, bool for_width);
/* Whether an aggregate through `sel` needs joint.c (it is not one and-term of pairs). */
bool selector_needs_joint(Plan *p, const IrNode *sel);
/* Whether a selector_width over sel takes more heads than CG_MAX_WIDTH_TERMS as a signed sum
 * of terms: then one head reads the joint one-hots of its sides instead (joint.c). */
bool selector_width_needs_joint(Plan *p, const IrNode *sel);

/* 4b. numeq.c: select(K, Q, ==) between numbers, scored through the numbers (2 q k - h(k), h the
 * chords of x^2 through knots) instead of one-hots, where that is smaller or the only way. */
typedef struct NumEq NumEq;
/* Its lowering, analysed on first use (value sets needed); NULL: the table lowering. */
const NumEq *numeq_of(Plan *p, const IrNode *select);
/* demand.c, for a selector with such a conjunct: what it computes and reads (the conjunct's
 * terms' numbers, the other conjuncts' one-hots); false when it has none (the caller's tables). */
bool numeq_want(Plan *p, const IrNode *sel, bool for_width);
/* Appends the score columns (at most NUMEQ_MAX_COLUMNS) of conjunct `select` (1 where K == Q,
 * <= 0 elsewhere), planning the MLPs they read; raises *time to the slot they are available at. */
enum { NUMEQ_MAX_COLUMNS = 5 };
bool numeq_columns(Plan *p, const IrNode *select, ScoreColumn *cols, size_t *n, int *time);

/* 5. classify.c: map classes, fusion (the leaves an MLP reads), and evaluation of fused maps */
/* The weight Lambda of BOS in the heads of selector_width `width` (1: plain). A width that is a
 * signed sum of 2..CG_MAX_WIDTH_TERMS terms, or that an affine map adds to another count, weighs
 * BOS Lambda = 64 (sum |coef|) N^2 (a power of 2, N = max_len): each head's u = Lambda /
 * (Lambda + w_t), and the sum of coef_t Lambda (1 - u_t) is within 1/64 of the width, a heavy view
 * (SopInfo.heavy): one number an MLP reads, not a grid of every term or count (ops.c). */
double width_bos_weight(Plan *p, const IrNode *width);
/* The deviation of s-op x's heavy view from its value (INFINITY: it has none): a heavy width's,
 * or an affine map's with integer coefficients over heavy views and free views, at most 1/8. */
double heavy_dev(Plan *p, const IrNode *x, const MapClass *cls);
/* Whether one table can read heavy views a and b both off their values: each within 1/16 of a
 * step of the projection once the other is the faster input (mlp.c), raising their widths' BOS
 * weights as far as that takes (a weight only ever grows, which only shrinks deviations). */
bool heavy_pair(Plan *p, const IrNode *a, const IrNode *b, const MapClass *cls);
/* The points one scalar of heavy view x spans (a width's 0..N, else its integers' range): mlp.c's
 * coefficient of the input after it. */
double heavy_span(const Plan *p, const IrNode *x);
const IrNode *map_single_varying_arg(const IrNode *n);
bool aggregate_averages(Plan *p, const IrNode *agg);
bool map_subtree_may_fail(Plan *p, const IrNode *n, const IrNode *const *leaves, uint32_t n_leaves);
/* Classifies every reachable map up to `out` (ids ascending) into cls, with switches where they
 * bring the output's estimated slot forward (else none: they only cost units). */
void classify_maps(Plan *p, const IrNode *out, MapClass *cls);
/* The leaves that stand for a positional s-op with a table in a tabulation: indices and/or
 * length, as its table depends on them (NULL entries when not needed). */
void pos_leaves(Plan *p, const SopInfo *info, const IrNode *out[2]);
/* What a tabulation may read instead of s-op x: x itself, or, when x is computed by an MLP of
 * its own, what that MLP reads (a positional s-op: indices and/or length). At most
 * CG_MAX_LEAVES + 2 entries. */
uint32_t sop_sources(Plan *p, const IrNode *x, const IrNode **out);
/* What a joint side's tuple is tabulated from: the union of its members' sop_sources. */
void joint_sources(Plan *p, Joint *j);
/* Evaluates map `n` given values of the leaves (maps through ir_map_apply, positional s-ops
 * through their tables). */
ValueResult plan_fused_apply(Plan *p, const IrNode *n, const IrNode *const *leaves, size_t n_leaves,
                             const Value *leaf_vals, char *msg, size_t msgsize);

/* switch.c: whether map n is a switch over these gates and numeric leaves (see Switch); fills
 * *out (arena) when it is, within SW_MAX_CASES cases and SW_MAX_UNITS units, without the gates
 * and leaves no case reads. */
enum { SW_MAX_CASES = 4096, SW_MAX_UNITS = 1 << 14 };
bool switch_analyse(Plan *p, const IrNode *n, const IrNode *const *gates, const bool *gate_by_num, uint32_t n_gates,
                    const IrNode *const *xs, const bool *x_u, uint32_t n_xs, Switch *out);

/* 6. demand.c: which views consumers read. selector_want, joint_want and kinds_demand are its
 * parts for selectors, joint selectors and kind blocks. */
void plan_demand(Plan *p, const IrNode *out, const MapClass *cls);
void selector_want(Plan *p, const IrNode *sel, bool for_width);
void joint_want(Plan *p, const IrNode *sel);
void kinds_demand(Plan *p, SopInfo *x);

/* 7. Building: plan.c drives; ops.c is its toolkit; selector.c, joint.c and kinds.c build the
 * heads and MLPs of selectors, joint selectors and kind blocks. */

/* ops.c: the plan's toolkit */
const char *plan_node_name(Plan *p, const IrNode *n);
/* Labels for s-ops that share a name (a function called twice): name@line:col, and #k where
 * even that is shared. */
void plan_unique_names(Plan *p, const IrNode *out);
uint32_t plan_alloc_dims(Plan *p, size_t count, const char *name, const ValueSet *vs);
/* A located error "<s-op> <what>" (with the real-valued-token hint where it applies); false. */
bool plan_error(Plan *p, const IrNode *n, const char *what);
/* sum_i i^power * indices:i, the numerical view of indices raised to a power (1 or 2) */
LinView plan_index_power(Plan *p, unsigned power);
HeadOp *plan_new_head(Plan *p);
PlanMargin *plan_add_margin(Plan *p);
MlpOp *plan_new_mlp(Plan *p);
/* A one-hot check of the block [dim, dim + count) after `layer` */
ModelCheck *plan_add_check(Plan *p, int layer, uint32_t dim, size_t count, const char *what);
/* After the layer that writes a block mixing strings and other atoms: one kind per sequence */
void plan_check_one_kind(Plan *p, SopInfo *info, int layer);
/* Fresh dims for a categorical block of the s-op; its cat views become unit vectors */
void plan_own_cat_block(Plan *p, SopInfo *info);
/* The numerical view of a categorical s-op with numeric values: sum of value * one-hot */
void plan_num_from_cat(Plan *p, SopInfo *info);
/* Adds a scalar input to m: a view and the n values it takes (*scalar, to fill ascending) */
bool plan_add_grid(Plan *p, MlpOp *m, LinView view, size_t n, double **scalar, uint32_t *index);
/* Adds leaf j of m: a width through its heads' u (via_u), a number through its numerical view,
 * anything else through the rank of its value; plus its kind block when its kinds collide */
bool plan_scalar_arg(Plan *p, MlpOp *m, size_t j, SopInfo *a, bool via_u);
/* The slot at which an MLP can read s-op a as plan_scalar_arg does: a width from its heads'
 * u, anything else once computed, and its kind block when it has one. */
int plan_leaf_time(const SopInfo *a);
/* Input j of m: the kind of s-op a alone (its kind block, or its one kind), evaluated as 1 of
 * that kind (kinds.c, for maps of real values). */
bool plan_kind_leaf(Plan *p, MlpOp *m, size_t j, SopInfo *a);
/* m's output: a categorical block (checked one-hot where the map raises) or a numerical dim */
void plan_mlp_output(Plan *p, MlpOp *m, SopInfo *info, bool want_cat_out);
/* The slot from which every dim view v reads holds its value (scanning the ops planned so far),
 * or t if later. */
int plan_view_time(const Plan *p, LinView v, int t);
/* The residual dims MLP op writes from out_dim on: its categorical block, or one number. */
static inline size_t mlp_out_count(const MlpOp *op) {
    return op->fn == MLP_FN_GATED || !op->out_cat ? 1 : op->out_vs ? op->out_vs->n : 1;
}
/* A categorical encoding for an s-op that only has a numerical one (one MLP later) */
bool plan_convert_to_cat(Plan *p, SopInfo *info);
/* Prints one line per s-op the model computes: its value set, how it is encoded and when. */
void plan_dump(Plan *p, const IrNode *out, FILE *f);

/* selector.c: score columns of a term and of an aggregate's selector; the heads of widths */
/* *causal: the head must mask keys after the query (a conjunct select(indices, indices, <) or
 * <=, scored through that mask: HeadOp.causal). */
bool selector_lower_term(Plan *p, const SelTerm *t, bool for_width, ScoreColumn **cols, size_t *n,
                         double *bos_level, int *time, bool *causal);
/* The columns of an aggregate's selector (one head). bos_q: a query-dependent BOS score (a view
 * of the query row), or empty for bos_level. */
bool selector_lower(Plan *p, const IrNode *sel, ScoreColumn **cols, size_t *n, double *bos_level, LinView *bos_q,
                    int *time, bool *causal);
/* The heads of a width: one per inclusion-exclusion term of `selector` (NULL: every key, which
 * is length), each averaging the BOS flag over its selected keys and BOS: u = 1/(w_t + 1), and
 * width = sum_t coef_t (1/u_t - 1). They sit in the first attention slot after the selector. */
typedef struct WidthHeads {
    uint32_t n_u;
    uint32_t u_dims[CG_MAX_WIDTH_TERMS];
    double u_coef[CG_MAX_WIDTH_TERMS];
    double u_lambda; /* BOS's weight (width_bos_weight): u_t = lambda / (lambda + w_t) */
    int time;
} WidthHeads;
bool plan_width_heads(Plan *p, const IrNode *node, const IrNode *selector, WidthHeads *w);

/* joint.c: the head of an aggregate whose selector combines several s-ops per side (or/not) */
bool joint_columns(Plan *p, const IrNode *sel, ScoreColumn **cols, size_t *n, double *bos_level, int *time);
bool joint_tuple_index(Plan *p, const Joint *j, const Value *vals, size_t *t);

/* kinds.c: plans x's kind block after x itself; kinds_materialise gives it dims of its own */
bool kinds_plan(Plan *p, SopInfo *x);
/* Whether the members of a's value set are the atoms it holds, kinds and all (kinds.c). */
bool source_kinds_exact(Plan *p, const SopInfo *a);
bool kinds_materialise(Plan *p, SopInfo *x);

/* plan.c */
bool plan_build(Plan *p, const IrNode *out);

/* schedule.c: every op reads only directions written at earlier slots (an internal error else) */
bool schedule_check(Plan *p);
/* The layers the plan's ops take: one past the last op's layer. */
int schedule_layers(const Plan *p);

/* 8. Emission. mlp.c: the hidden units of MLP ops, collected per layer before the matrices are
 * written; emit.c: the weights, layer by layer, with the BOS row tracked exactly. */
typedef struct HiddenBuf {
    size_t n, cap;
    LinView *in;       /* W1 column (before scaling) */
    double *scale, *bias;
    uint32_t *out_dim; /* W2 row entries: up to two per unit */
    double *out_coef;
    uint32_t *out_dim2;
    double *out_coef2;
    const IrNode *largest; /* the s-op whose op added the most units (for messages) */
    /* gated units (hidden_gate): ReLU(in * scale + bias) * (gate + gate_bias); others * 1 */
    LinView *gate;
    double *gate_bias;
    bool gated;
    size_t stop;       /* tabulating stops past this many units: over a limit, reported by emit.c */
} HiddenBuf;
size_t hidden_add(Plan *p, HiddenBuf *hb, LinView in, double scale, double bias);
/* Multiplies unit h by gate + bias (the layer becomes a gated MLP). */
void hidden_gate(HiddenBuf *hb, size_t h, LinView gate, double bias);
/* Appends op's units to hb and its constant output to b2 (the layer's output bias). */
bool mlp_tabulate(Plan *p, const MlpOp *op, HiddenBuf *hb, double *b2);
bool emit_model(Plan *p, const IrNode *out, const char *output_name, const CodegenOptions *opt, Model *m);

#endif
