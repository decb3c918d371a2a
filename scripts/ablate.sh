#!/usr/bin/env bash
# A paired ablation: two runs of the same config and seeds that differ in one key, then the
# strength of their last networks on the ladder (one maximum-likelihood Elo each, from games
# against the same rungs) and head to head. The base run is reused when it already exists, so
# several ablations share it.
#
#   scripts/ablate.sh NAME TABLE KEY VALUE [--set TABLE KEY VALUE]... [--both TABLE KEY VALUE]...
#                     [--base NAME] [--config F] [--generations N] [--games N] [--rungs A,B]
#                     [--nodes N] [--book FILE] [--fsf-skill S] [--fsf-games N]
#   scripts/ablate.sh q-ratio replay q_ratio 0.5
#   scripts/ablate.sh short-term replay short_term_horizon 8 --set replay short_term_ratio 0.5
#
# TABLE is "-" for a top-level key; --set changes one more key of the test run (a method that
# takes several keys is still one ablation); --both changes a key of both runs, and --base
# names the base run (default "base"): a method measured on top of one adopted earlier reuses
# that method's run as its base, e.g.
#   scripts/ablate.sh mirror replay mirror true --both - encoding '"attacks"' --base attacks
#
# The head-to-head match plays the variant's balanced opening book, configs/openings/VARIANT.txt,
# each opening with both colours, when there is one (--book FILE names another; --book none
# plays shared random 4-ply openings instead). With --fsf-skill S each last network also plays
# Fairy-Stockfish (Skill Level S, 20 = full strength, one thread) at 100 ms a move through
# `trainer usi` over the book (--fsf-games N: its first N/2 openings; default all of them), the
# two matches side by side, their games in runs/ablate-NAME/fsf-base and fsf-test: the measure
# of the learning targets.
#
# Runs go to runs/ablate-BASE and runs/ablate-NAME; figures to runs/ablate-NAME/ablation.txt.
# Both runs keep the config's time budget (strength per hour is the measure: run them on a
# quiet machine), or with --generations N stop after N generations instead, so that another
# job on the machine slows both alike rather than deciding the result.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 4 ] || { sed -n 2,21p "$0"; exit 2; }
name=$1 table=$2 key=$3 value=$4
shift 4
config=configs/runs/default.toml generations= games=50 rungs=fsf-skill0,fsf-skill5 nodes=16
book= skill= fsf_games=
sets=("$table" "$key" "$value") both=() basename=base
while [ $# -gt 0 ]; do
  case $1 in
    --set) [ $# -ge 4 ] || { echo "--set needs TABLE KEY VALUE" >&2; exit 2; }
      sets+=("$2" "$3" "$4"); shift 4 ;;
    --both) [ $# -ge 4 ] || { echo "--both needs TABLE KEY VALUE" >&2; exit 2; }
      both+=("$2" "$3" "$4"); shift 4 ;;
    --base) basename=$2; shift 2 ;;
    --config) config=$2; shift 2 ;;
    --generations) generations=$2; shift 2 ;;
    --games) games=$2; shift 2 ;;
    --rungs) rungs=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    --book) book=$2; shift 2 ;;
    --fsf-skill) skill=$2; shift 2 ;;
    --fsf-games) fsf_games=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
variant=$(sed -n 's/^variant *= *"\(.*\)".*/\1/p' "$config" | head -n 1)
ladder=$(sed -n 's/^ladder *= *"\(.*\)".*/\1/p' "$config" | head -n 1)
if [ -z "$book" ]; then
  book=configs/openings/$variant.txt
elif [ "$book" != none ] && [ ! -f "$book" ]; then
  echo "--book $book: no such file" >&2; exit 2
fi
if [ "$book" = none ] || [ ! -f "$book" ]; then
  [ -z "$skill" ] || { echo "--fsf-skill needs a book ($book)" >&2; exit 2; }
  openings=(--random-plies 4 --seed 5)
else
  openings=(--openings "$book")
fi
bin=${TRAINER:-target/release/trainer}
[ -x "$bin" ] || cargo build --release --locked -p trainer
mkdir -p runs/ablate-configs

# Writes $1 from $config with the run name $2, the generation budget and the TABLE KEY VALUE
# triples that follow.
edit() {
  python3 - "$config" "$1" "$2" "$generations" "${@:3}" <<'PY'
import re, sys
src, out, run, gens = sys.argv[1:5]
triples = sys.argv[5:]
lines = open(src).read().splitlines()
def set_key(lines, table, key, value):
    # The key's line inside [table] (top level when table is "-"), replaced or added.
    start, end = 0, len(lines)
    if table != "-":
        hdr = [i for i, l in enumerate(lines) if l.strip() == f"[{table}]"]
        if not hdr:
            return lines + ["", f"[{table}]", f"{key} = {value}"]
        start = hdr[0] + 1
    for i in range(start, len(lines)):
        if lines[i].startswith("["):
            end = i
            break
    for i in range(start, end):
        if re.match(rf"\s*{re.escape(key)}\s*=", lines[i]):
            lines[i] = f"{key} = {value}"
            return lines
    # A top-level key goes before the first table; a table key right after its header.
    lines.insert(end if table == "-" else start, f"{key} = {value}")
    return lines
lines = set_key(lines, "-", "name", f'"{run}"')
if gens:
    lines = set_key(lines, "-", "generations", gens)
    lines = set_key(lines, "-", "max_minutes", "0")
for i in range(0, len(triples), 3):
    lines = set_key(lines, *triples[i:i + 3])
open(out, "w").write("\n".join(lines) + "\n")
PY
}

base=runs/ablate-configs/ablate-$basename.toml
test=runs/ablate-configs/ablate-$name.toml
edit "$base" "ablate-$basename" "${both[@]}"
edit "$test" "ablate-$name" "${both[@]}" "${sets[@]}"
export OMP_WAIT_POLICY=PASSIVE
for c in "$base" "$test"; do
  r=runs/$(basename "$c" .toml)
  if [ -f "$r/state.json" ] && grep -q '"complete": true' "$r/state.json"; then
    echo "$r is complete: reused"
  else
    "$bin" run --config "$c" --runs-dir runs > /dev/null
  fi
done

last() { ls "runs/$1/models/"*.safetensors | sort | tail -n 1; }
a=$(last "ablate-$basename") b=$(last "ablate-$name")
out=runs/ablate-$name/ablation.txt
{
  echo "ablation $name: ${sets[*]} against the base ablate-$basename ($config${both[*]:+ with ${both[*]}}${generations:+, $generations generations})"
  echo "base $a: $(grep -o '"seconds": [0-9.]*' "runs/ablate-$basename/state.json" | head -n 1)"
  echo "test $b: $(grep -o '"seconds": [0-9.]*' "runs/ablate-$name/state.json" | head -n 1)"
  for p in "$a" "$b"; do
    echo "ladder placement of $p:"
    "$bin" ladder place --ladder "${ladder:-$variant}" --player "model:$p" --rungs "$rungs" --games "$games" --nodes "$nodes"
  done
  echo "head to head (test as A, ${openings[*]}):"
  "$bin" arena --variant "$variant" --player "model:$b" --player "model:$a" \
      --games $((games * 2)) --nodes "$nodes" "${openings[@]}" | tail -n 3
  if [ -n "$skill" ]; then
    n=${fsf_games:-$(( $(grep -cv '^\s*\(#\|$\)' "$book") * 2 ))}
    # The two matches side by side, one core each (each alternates two one-thread engines).
    for side in base test; do
      p=$a; [ $side = base ] || p=$b
      { echo "$p through trainer usi against Fairy-Stockfish Skill Level $skill, 100 ms a move, $n games over $book:"
        "$bin" arena --variant "$variant" --player "engine:$bin usi --model $p" \
          --player engine:/usr/games/fairy-stockfish --protocol-b uci \
          --option-b "Skill Level=$skill" --option-b Threads=1 --movetime 100 \
          --games "$n" "${openings[@]}" --out "runs/ablate-$name/fsf-$side" | grep -A 2 '^results for'
      } > "runs/ablate-$name/fsf-$side.txt" &
    done
    wait
    cat "runs/ablate-$name/fsf-base.txt" "runs/ablate-$name/fsf-test.txt"
  fi
} | tee "$out"
