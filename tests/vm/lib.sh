# shellcheck shell=bash
# Shared helpers for tests/vm/*.sh (sourced, not run).

# Repo-root-relative build dir for everything the VM scripts generate.
VM_BUILD=${VM_BUILD:-$(realpath -m "$(dirname "${BASH_SOURCE[0]}")/../../build/vm")}

# need_pkgs PKG...: apt-get install whatever is missing. A flock keeps two
# scripts run by `make -j` off dpkg's lock; a failed install is retried once
# after `apt-get update`, since a fresh machine may have stale or no lists.
need_pkgs() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
			missing+=("$p")
	done
	((${#missing[@]})) || return 0
	echo "vm: installing ${missing[*]}" >&2
	mkdir -p "$VM_BUILD"
	(
		flock 9
		export DEBIAN_FRONTEND=noninteractive
		apt-get install -y -q --no-install-recommends "${missing[@]}" ||
			{ apt-get update -q && apt-get install -y -q --no-install-recommends "${missing[@]}"; }
	) 9>"$VM_BUILD/.apt.lock" >&2
}
