# shellcheck shell=bash
# A throw-away user for the tests of what memtrack, run as root, lets other
# users do.  Source after common.sh; call user_cleanup from the cleanup trap.
#   user_create           makes $test_user (mt_sec_<pid>), and its group
#   user_allow_sudo       lets it run $MEMTRACK (and more) through sudo, without a password
#   as_user <cmd...>      runs a command as that user (as_user_bg: in the background)
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

# user_allow_sudo [<program>...]: memtrack and these
user_allow_sudo() {
	local progs=$MEMTRACK p
	command -v sudo >/dev/null || { echo "sudo is missing: run scripts/install-deps.sh"; exit 1; }
	for p in "$@"; do
		progs="$progs, $p"
	done
	echo "$test_user ALL=(root) NOPASSWD: $progs" >"/etc/sudoers.d/$test_user"
	chmod 440 "/etc/sudoers.d/$test_user"
}

as_user() {
	setpriv --reuid="$test_user" --regid="$test_user" --init-groups -- "$@"
}

# as_user_bg <cmd...>: in the background, its pid in $bg_pid (the command's own:
# a function run with & would leave the pid of a root subshell)
as_user_bg() {
	setpriv --reuid="$test_user" --regid="$test_user" --init-groups -- "$@" &
	# shellcheck disable=SC2034 # for the scripts that source this
	bg_pid=$!
}

sudo_memtrack() {
	as_user sudo -n "$MEMTRACK" "$@"
}

user_cleanup() {
	rm -f "/etc/sudoers.d/$test_user"
	# fails while a process of the user runs: the test left one, and says so
	if id "$test_user" >/dev/null 2>&1 && ! userdel "$test_user"; then
		echo "cannot remove user $test_user: $(pgrep -u "$test_user" -l | xargs)"
	fi
}

# fingerprint <file>: what must not change about a victim file
fingerprint() {
	stat -c '%s %Y %u:%g %a %h' "$1" && md5sum <"$1"
}
