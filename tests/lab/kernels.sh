#!/bin/bash
# Which of make check's Debian labs runs each lab case: both, or one for a
# "# lab-once" case (run-cases.sh gives every other one to each lab, in
# the order the cases run), with the first line of the case's comment.
#   tests/lab/kernels.sh
set -euo pipefail
cd "$(dirname "$0")/cases"
first=() last=()
for c in *.sh; do
	if grep -q '^# lab-last$' "$c"; then last+=("$c"); else first+=("$c"); fi
done
i=0
for c in "${first[@]}" "${last[@]}"; do
	if grep -qE '^# lab-once(:|$)' "$c"; then
		k=$([ $((i % 2)) = 0 ] && echo 6.1 || echo 6.12)
		i=$((i + 1))
	else
		k=both
	fi
	printf '%-28s %-5s %s\n' "${c%.sh}" "$k" "$(sed -n '1s/^# *//p' "$c")"
done
