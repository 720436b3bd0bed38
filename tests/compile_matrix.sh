#!/usr/bin/env bash
# The header must compile as C99, C11, C++11 and C++17 with -Wall -Wextra -pedantic
# -Werror, in two translation units (declarations in one, implementation in the other)
# and in the STATIC variant. One PASS/FAIL line per combination.
set -u
cd "$(dirname "$0")/compile"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
W="-O2 -Wall -Wextra -pedantic -Werror"
check() { # name, command...
  local name=$1; shift
  local log
  if log=$("$@" 2>&1); then echo "PASS compile_$name"; else echo "FAIL compile_$name: $(echo "$log" | head -5 | tr '\n' ' ')"; fi
}
for cc in gcc clang; do
  command -v $cc >/dev/null || { echo "SKIP compile_$cc: $cc not installed"; continue; }
  cxx=$([ $cc = gcc ] && echo g++ || echo clang++)
  for std in c99 c11; do
    check "${cc}_${std}_two_tus" sh -c "$cc -std=$std $W -c impl.c -o $out/impl.o && $cc -std=$std $W -c use.c -o $out/use.o && $cc $out/impl.o $out/use.o -o $out/a -ldl -lpthread && $out/a >/dev/null"
    check "${cc}_${std}_static" sh -c "$cc -std=$std $W static.c -o $out/s -ldl -lpthread && $out/s"
  done
  for std in c++11 c++17; do
    check "${cxx}_${std}_two_tus" sh -c "$cxx -x c++ -std=$std $W -c impl.c -o $out/impl.o && $cxx -x c++ -std=$std $W -c use.c -o $out/use.o && $cxx $out/impl.o $out/use.o -o $out/a -ldl -lpthread && $out/a >/dev/null"
    check "${cxx}_${std}_static" sh -c "$cxx -x c++ -std=$std $W static.c -o $out/s -ldl -lpthread && $out/s"
  done
done
