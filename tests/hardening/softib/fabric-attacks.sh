#!/bin/sh
# fabric-attacks.sh JOB ATTACKER: another user (nobody) against softib's
# fabric file in /dev/shm. Planted before the job: a symbolic link to an
# existing file and to a file to be created, a world-writable fabric, a
# fabric of another owner, a FIFO, our own file with group/other access.
# The job must refuse each with a message naming the file and what is
# wrong, and follow, create, resize or remove nothing. Then a real job runs
# while the attacker tries to open, truncate, chmod, remove, rename and
# replace its fabric: all refused, the job's bytes arrive, its guards stay.
# Nothing of any of it may be left in /dev/shm.
job=$1
attacker=$2
if [ "$(id -u)" != 0 ]; then
    echo "skip: must run as root to run the attacker as another user"
    exit 77
fi
if ! setpriv --reuid=nobody --regid=nogroup --clear-groups true 2>/dev/null; then
    echo "skip: setpriv cannot become nobody here"
    exit 77
fi
as_nobody() {
    setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
}

name=hardening-attack-$$
path=/dev/shm/softib-fabric-$name
tmp=$(mktemp -d) || exit 1
chmod 755 "$tmp"
trap 'rm -rf "$tmp"; rm -f "$path"' EXIT
export SOFTIB_FABRIC=$name
failed=0

fail() {
    echo "FAIL: $*"
    failed=1
}

# refused CASE TEXT: the job must end with status 2 and softib's message
refused() {
    out=$("$job" 2>&1)
    status=$?
    if [ $status -ne 2 ] || ! printf '%s\n' "$out" | grep -qF -- "refusing fabric $path: $2"; then
        fail "$1: expected the job to refuse the fabric with \"$2\"; status $status:"
        printf '%s\n' "$out"
    else
        echo "ok: $1: $(printf '%s\n' "$out" | grep -F 'refusing fabric')"
    fi
}

# 1. a symbolic link to an existing file of the job's user
echo "do not touch" > "$tmp/victim"
chmod 644 "$tmp/victim"
cp -p "$tmp/victim" "$tmp/victim.orig"
as_nobody ln -s "$tmp/victim" "$path" || exit 1
refused "symlink to an existing file" "a symbolic link"
cmp -s "$tmp/victim" "$tmp/victim.orig" && [ "$(stat -c %s.%Y "$tmp/victim")" = "$(stat -c %s.%Y "$tmp/victim.orig")" ] ||
    fail "the link's target was changed"
rm -f "$path"

# 2. a dangling symbolic link: following it would create a file as us
as_nobody ln -s "$tmp/created" "$path" || exit 1
refused "dangling symlink" "a symbolic link"
[ ! -e "$tmp/created" ] || fail "a file was created through the link"
rm -f "$path"

# 3. a world-writable fabric planted by the other user
as_nobody sh -c "umask 0; : > '$path'; chmod 666 '$path'" || exit 1
refused "world-writable file of another user" "owned by uid $(id -u nobody)"
[ "$(stat -c %s "$path")" = 0 ] || fail "the planted file was resized"
rm -f "$path"

# 4. a private file of the other user
as_nobody sh -c "umask 077; : > '$path'" || exit 1
refused "another user's file" "owned by uid $(id -u nobody)"
rm -f "$path"

# 5. a FIFO
as_nobody mkfifo -m 666 "$path" || exit 1
refused "FIFO" "not a regular file"
rm -f "$path"

# 6. our own file, open to everybody (an old umask, a careless copy)
(umask 0; : > "$path"; chmod 666 "$path")
refused "our file with mode 0666" "mode 0666 lets other users open it"
[ "$(stat -c %s "$path")" = 0 ] || fail "the file was resized"
rm -f "$path"

# 7. a running job, attacked
out=$(SIB_JOB_HOOK="setpriv --reuid=nobody --regid=nogroup --clear-groups $attacker \"\$SIB_JOB_FABRIC\"" "$job" 2>&1)
status=$?
printf '%s\n' "$out" | grep '^attacker:'
if [ $status -ne 0 ] || ! printf '%s\n' "$out" | grep -q '^job: ok'; then
    fail "the attacked job failed (status $status):"
    printf '%s\n' "$out"
elif printf '%s\n' "$out" | grep -q ALLOWED; then
    fail "the attacker got in"
else
    echo "ok: the job ran under attack; every attempt was refused"
fi

left=$(ls -A /dev/shm | grep -F "softib-fabric-$name")
[ -z "$left" ] || fail "left in /dev/shm: $left"
[ $failed -eq 0 ] && echo "all attacks refused; /dev/shm keeps nothing of them"
exit $failed
