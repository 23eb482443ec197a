# shellcheck shell=bash
# A throw-away user for the tests of what memtrack, run as root, lets other
# users do.  Source after common.sh; call user_cleanup from the cleanup trap.
#   user_create           makes $test_user (mt_sec_<pid>), and its group
#   user_allow_sudo       lets it run $MEMTRACK through sudo, without a password
#   as_user <cmd...>      runs a command as that user
#   sudo_memtrack <args>  runs 'sudo memtrack <args>' as that user: SUDO_UID & co.
#                         set by sudo itself

test_user=mt_sec_$$

user_create() {
	command -v useradd >/dev/null || skip "useradd is missing"
	[ "$(id -u)" -eq 0 ] || skip "not root: cannot make a user"
	useradd --no-create-home --shell /bin/sh "$test_user" ||
		{ echo "cannot create user $test_user"; exit 1; }
	# shellcheck disable=SC2034 # for the scripts that source this
	test_uid=$(id -u "$test_user")
	# shellcheck disable=SC2034
	test_gid=$(id -g "$test_user")
}

user_allow_sudo() {
	command -v sudo >/dev/null || { echo "sudo is missing: run scripts/install-deps.sh"; exit 1; }
	echo "$test_user ALL=(root) NOPASSWD: $MEMTRACK" >"/etc/sudoers.d/$test_user"
	chmod 440 "/etc/sudoers.d/$test_user"
}

as_user() {
	setpriv --reuid="$test_user" --regid="$test_user" --init-groups -- "$@"
}

sudo_memtrack() {
	as_user sudo -n "$MEMTRACK" "$@"
}

user_cleanup() {
	rm -f "/etc/sudoers.d/$test_user"
	if id "$test_user" >/dev/null 2>&1; then
		userdel "$test_user" 2>/dev/null || true
	fi
}

# fingerprint <file>: what must not change about a victim file
fingerprint() {
	stat -c '%s %Y %u:%g %a %h' "$1" && md5sum <"$1"
}
