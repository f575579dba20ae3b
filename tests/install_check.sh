#!/bin/sh
# `make install-check` (part of `make check`), from the project root: sh tests/install_check.sh MAKE
# Installs into a temporary PREFIX and uses what is there as a user would, from another folder:
#   1. the files: the tools, libraspcc.a, the headers, raspcc.pc, the man pages, the prelude, the
#      examples;
#   2. the installed tools run make demo's steps on the installed examples;
#   3. pkg-config finds raspcc; the installed example C program (examples/c/run_model.c) compiles
#      and links against the installed library with its flags and prints what rasprun prints;
#      every installed header compiles on its own;
#   4. man -l renders each page (and groff -ww finds nothing to warn about), man finds them on
#      MANPATH, and each names every command and long option its tool's --help lists;
#   5. DESTDIR stages an install under DESTDIR/PREFIX (raspcc.pc still says PREFIX);
#   6. make uninstall leaves no file behind, in both.
# One line per failure, then "install: N passed, M failed"; exit 1 on any failure.
make=${1:-make}
repo=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
passed=0
failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL install: $*"; }
finish() {
    echo "install: $passed passed, $failed failed"
    [ "$failed" = 0 ]
    exit
}
# Text as a terminal would show it, without overstrike (bold, underline) sequences.
plain() { sed 's/.\x08//g'; }

if ! $make --no-print-directory -s install PREFIX="$prefix" >"$tmp/log" 2>&1; then
    fail "make install PREFIX=$prefix: $(tail -n 3 "$tmp/log" | tr '\n' ' ')"
    finish
fi

# 1. the files
for f in bin/raspcc bin/rasprun bin/raspfut lib/libraspcc.a lib/pkgconfig/raspcc.pc \
    include/raspcc/runtime/model.h include/raspcc/codegen/codegen.h include/raspcc/fut/fut.h \
    share/man/man1/raspcc.1 share/man/man1/rasprun.1 share/man/man1/raspfut.1 share/raspcc/prelude.rasp \
    share/raspcc/examples/reverse.rasp share/raspcc/examples/c/run_model.c share/doc/raspcc/fut.md; do
    if [ -f "$prefix/$f" ]; then pass; else fail "make install did not install $f"; fi
done
for t in raspcc rasprun raspfut; do
    if [ -x "$prefix/bin/$t" ]; then pass; else fail "bin/$t is not executable"; fi
done
if [ -z "$(find "$prefix/include" -name '*internal.h' -o -name ast_build.h -o -name layout.h)" ]; then pass; else
    fail "private headers installed: $(find "$prefix/include" -name '*internal.h' -o -name ast_build.h -o -name layout.h)"
fi

cd "$tmp" || exit 1 # from here on nothing of the repository is in reach but through $repo

# 2. make demo's steps with the installed tools and examples
if sh "$repo/tools/demo.sh" "$prefix/bin" "$prefix/share/raspcc/examples" >"$tmp/demo" 2>&1 &&
    grep -q '^verify: [0-9]* inputs, 0 mismatches' "$tmp/demo"; then
    pass
else
    fail "tools/demo.sh with the installed tools: $(tail -n 3 "$tmp/demo" | tr '\n' ' ')"
fi

# 3. pkg-config, the library, the headers
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
version=$("$prefix/bin/raspcc" --version | sed 's/^raspcc //')
if [ "$(pkg-config --modversion raspcc 2>&1)" = "$version" ] &&
    [ "$(pkg-config --variable=prefix raspcc)" = "$prefix" ]; then
    pass
else
    fail "pkg-config raspcc: version '$(pkg-config --modversion raspcc 2>&1)' (want '$version'), prefix '$(pkg-config --variable=prefix raspcc)'"
fi
cflags=$(pkg-config --cflags raspcc) libs=$(pkg-config --libs raspcc)
# shellcheck disable=SC2086
if cc -std=c11 -Wall -Wextra -Werror $cflags "$prefix/share/raspcc/examples/c/run_model.c" $libs -o run_model \
    2>"$tmp/cc"; then
    pass
    "$prefix/bin/raspcc" "$prefix/share/raspcc/examples/reverse.rasp" -o reverse.bin --vocab abcdehlo --max-len 8
    ./run_model reverse.bin hello '"abc"' abcdefghijk >got 2>&1
    got_rc=$?
    "$prefix/bin/rasprun" reverse.bin hello '"abc"' abcdefghijk >want 2>&1
    want_rc=$?
    if [ "$got_rc" = 1 ] && [ "$want_rc" = 1 ] && cmp -s got want && grep -qx '\[o, l, l, e, h\]' got; then pass; else
        fail "run_model (exit $got_rc) and rasprun (exit $want_rc) differ: $(tr '\n' ' ' <got) / $(tr '\n' ' ' <want)"
    fi
else
    fail "cc run_model.c \$(pkg-config --cflags --libs raspcc): $(head -n 3 "$tmp/cc" | tr '\n' ' ')"
fi
bad=""
for h in $(cd "$prefix/include/raspcc" && find . -name '*.h' | sed 's|^\./||' | sort); do
    # shellcheck disable=SC2086
    printf '#include "%s"\n#include "%s"\nint main(void) { return 0; }\n' "$h" "$h" >one.c
    # shellcheck disable=SC2086
    cc -std=c11 -Wall -Wextra -Werror $cflags -c one.c -o one.o 2>>"$tmp/headers" || bad="$bad $h"
done
if [ -z "$bad" ]; then pass; else fail "headers that do not compile on their own (twice):$bad: $(head -n 2 "$tmp/headers")"; fi

# 4. the man pages
for page in raspcc rasprun raspfut; do
    file=$prefix/share/man/man1/$page.1
    LC_ALL=C MANWIDTH=100 man -l "$file" 2>"$page.err" | plain >"$page.txt"
    if grep -q "^NAME" "$page.txt" && grep -Eq "^ *$page +- " "$page.txt" && [ ! -s "$page.err" ]; then pass; else
        fail "man -l $page.1: $(head -n 2 "$page.err") $(head -n 3 "$page.txt" | tr '\n' ' ')"
    fi
    if groff -man -Tutf8 -ww -z "$file" 2>"$page.warn" && [ ! -s "$page.warn" ]; then pass; else
        fail "groff -ww $page.1: $(head -n 2 "$page.warn")"
    fi
    if [ "$(MANPATH="$prefix/share/man" man -w "$page" 2>&1)" = "$file" ]; then pass; else
        fail "man -w $page with MANPATH=$prefix/share/man: $(MANPATH="$prefix/share/man" man -w "$page" 2>&1)"
    fi
    # what --help names, the page must name: every long option (and raspfut's commands)
    "$prefix/bin/$page" --help >"$page.help" 2>&1
    if [ "$page" = raspfut ]; then
        for cmd in $(sed -n 's/^  \([a-z][a-z0-9-]*\)  .*/\1/p' "$page.help"); do
            echo "raspfut $cmd" >>"$page.want"
            "$prefix/bin/raspfut" "$cmd" --help >>"$page.help" 2>&1
        done
    fi
    grep -o -- '--[a-zA-Z][a-zA-Z0-9-]*' "$page.help" | sort -u >>"$page.want"
    missing=""
    while IFS= read -r word; do
        grep -qF -- "$word" "$page.txt" || missing="$missing '$word'"
    done <"$page.want"
    if [ -n "$(cat "$page.want")" ] && [ -z "$missing" ]; then pass; else
        fail "man page $page.1 does not mention$missing (from $page --help): document them in man/$page.1"
    fi
done

# 5. DESTDIR stages under DESTDIR/PREFIX
stage=$tmp/stage
if (cd "$repo" && $make --no-print-directory -s install DESTDIR="$stage" PREFIX=/opt/raspcc) >"$tmp/log" 2>&1 &&
    [ -x "$stage/opt/raspcc/bin/raspcc" ] && [ -z "$(find "$stage" -type f ! -path "$stage/opt/raspcc/*")" ] &&
    grep -qx 'prefix=/opt/raspcc' "$stage/opt/raspcc/lib/pkgconfig/raspcc.pc"; then
    pass
else
    fail "make install DESTDIR=$stage PREFIX=/opt/raspcc: $(tail -n 2 "$tmp/log" | tr '\n' ' ')"
fi

# 6. make uninstall leaves no file behind
if (cd "$repo" && $make --no-print-directory -s uninstall DESTDIR="$stage" PREFIX=/opt/raspcc &&
    $make --no-print-directory -s uninstall PREFIX="$prefix") >"$tmp/log" 2>&1 &&
    [ -z "$(find "$stage" "$prefix" -type f)" ]; then
    pass
else
    fail "make uninstall left: $(find "$stage" "$prefix" -type f | head -n 5 | tr '\n' ' ') $(tail -n 2 "$tmp/log")"
fi
finish
