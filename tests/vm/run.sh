#!/usr/bin/env bash
# Boots each test kernel under qemu (TCG) with the static tool, the static
# workloads and tests/vm/run-tests.sh, and reports as one TAP stream.  A
# kernel that does not boot, or a runner that does not report, fails.
set -u
cd "$(dirname "$0")/../.."
B=build
kernels=(cloud:build/vm/cloud/vmlinuz fp:build/vm/fp/bzImage)
n=0
summary=()

for k in "${kernels[@]}"; do
	name=${k%%:*} image=${k#*:}
	img=$B/vm/$name-tests.cpio.gz
	log=$B/vm/$name-tests.console
	tests/vm/mkinitramfs.sh "$img" $B/stackcount $B/stacksnoop $B/tests/workloads/static/paths \
		$B/tests/workloads/static/usdt run-tests=tests/vm/run-tests.sh > /dev/null
	VM_APPEND="SW_KERNEL=$name" VM_LOG=$B/vm/log/$name-tests.log \
		tests/vm/boot.sh "$image" "$img" 900 > "$log" 2>&1
	rc=$?
	version=$(sed -n 's/.*STACKWALK-VM-START \([^ ]*\).*/\1/p' "$log" | tr -d '\r' | head -n1)
	ran=0 bad=0
	while IFS= read -r line; do
		line=${line%$'\r'}
		case $line in
		"ok "*|"not ok "*)
			n=$((n + 1)) ran=$((ran + 1))
			[[ $line == "not ok"* ]] && bad=$((bad + 1))
			echo "$line" | sed -E "s/^(not ok|ok) [0-9]+/\1 $n/"
			;;
		"# "*) echo "$line" ;;
		esac
	done < "$log"
	if [ "$rc" -eq 2 ] || [ "$ran" -eq 0 ]; then
		n=$((n + 1)) bad=$((bad + 1))
		echo "not ok $n - $name: the VM did not boot or its runner did not report (see $log)"
	fi
	summary+=("# $name kernel ${version:-?}: $ran tests, $bad failed")
done
printf '%s\n' "${summary[@]}"
echo "1..$n"
