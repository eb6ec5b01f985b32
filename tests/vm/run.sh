#!/usr/bin/env bash
# Boots each test kernel under qemu (TCG) with the static tool, the static
# workloads, tests/vm/run-tests.sh and a fresh ext4 disk, and reports as one
# TAP stream.  The kernels: every one in ../shared/kernels (a release per
# eBPF era), Debian's cloud 6.1 and 6.12, a 6.1 built with frame
# pointers and a 6.12 built with frame pointers and fprobe.  Two boot at a time.  A kernel that does not boot, or a runner
# that does not report, fails.
set -u
cd "$(dirname "$0")/../.."
B=build
S=$B/tests/workloads/static
kernels=(cloud:$B/vm/cloud/vmlinuz cloud612:$B/vm/cloud612/vmlinuz fp:$B/vm/fp/bzImage
	fp612:$B/vm/fp612/bzImage)
for k in ../shared/kernels/*/bzImage; do
	[ -e "$k" ] && kernels+=("$(basename "$(dirname "$k")"):$k")
done
# VM_MORE_KERNELS="DIR ...": more kernels, each DIR holding a bzImage built
# as ../shared/kernels' are (named by the DIR's last component)
for d in ${VM_MORE_KERNELS:-}; do
	[ -e "$d/bzImage" ] || { echo "VM_MORE_KERNELS: no bzImage in $d" >&2; exit 1; }
	kernels+=("$(basename "$d"):$d/bzImage")
done

# VM_ONLY=REGEX boots only the kernels whose names match, VM_TESTS=FUNCTION[,...]
# runs only run-tests.sh's tests of those names (while debugging)
if [ -n "${VM_ONLY:-}" ]; then
	only=()
	for k in "${kernels[@]}"; do
		[[ ${k%%:*} =~ $VM_ONLY ]] && only+=("$k")
	done
	kernels=("${only[@]}")
fi

img=$B/vm/tests.cpio.gz
tests/vm/mkinitramfs.sh "$img" $B/stackcount $B/stacksnoop $S/paths $S/usdt $S/sysc $S/phases $S/cfipaths $S/mapupd $S/semleaf $S/deep $S/cfipaths_o2 $S/vdsopaths $B/tests/workloads/ia32 \
	cfipaths_dyn=$B/tests/workloads/cfipaths \
	cfipaths_o2_dyn=$B/tests/workloads/cfipaths_o2 \
	/lib/x86_64-linux-gnu/libc.so.6="$(realpath /lib/x86_64-linux-gnu/libc.so.6)" \
	/lib64/ld-linux-x86-64.so.2="$(realpath /lib64/ld-linux-x86-64.so.2)" \
	expect=tests/vm/expect run-tests=tests/vm/run-tests.sh > /dev/null || exit 1

# boot NAME IMAGE: the kernel's console in $B/vm/NAME-tests.console
boot() {
	local name=$1 image=$2 disk=$B/vm/$1-disk.img smp=2 append=
	# 6.12 on one CPU that preempts anywhere in the kernel: two processes
	# there take turns inside each other's probes (run-tests.sh's races)
	[ "$name" = cloud612 ] && smp=1 append=preempt=full
	[ -n "${VM_TESTS:-}" ] && append="$append SW_ONLY=$VM_TESTS"
	# the old kernels mount only ext4 features they know
	rm -f "$disk"
	truncate -s 64M "$disk" &&
		mkfs.ext4 -q -F -O ^metadata_csum,^64bit,^orphan_file,^metadata_csum_seed "$disk" 2>/dev/null ||
		mkfs.ext4 -q -F -O ^metadata_csum,^64bit "$disk"
	VM_SMP=$smp VM_APPEND="SW_KERNEL=$name $append" VM_LOG=$B/vm/log/$name-tests.log \
		VM_QEMU_ARGS="-drive file=$disk,if=virtio,format=raw" \
		tests/vm/boot.sh "$image" "$img" 900 > "$B/vm/$name-tests.console" 2>&1
	echo $? > "$B/vm/$name-tests.rc"
	rm -f "$disk"
}

running=0
for k in "${kernels[@]}"; do
	boot "${k%%:*}" "${k#*:}" &
	running=$((running + 1))
	if [ $running -ge 2 ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait

n=0
summary=()
for k in "${kernels[@]}"; do
	name=${k%%:*}
	log=$B/vm/$name-tests.console
	rc=$(cat "$B/vm/$name-tests.rc" 2>/dev/null || echo 2)
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
if [ -z "${VM_ONLY:-}" ] && [ ${#kernels[@]} -le 3 ]; then
	n=$((n + 1))
	echo "not ok $n - no kernels in ../shared/kernels: the matrix misses every era before 6.1"
fi
printf '%s\n' "${summary[@]}"
echo "1..$n"
