#!/bin/sh
# The file API (corral(1), corral-policy(5)), end to end.
# Sets up: the test bed; corrald in the test host, its socket opened to
# every local user; a workspace and a read-only reference folder owned by
# uid 1000; a made-up home of uid 1000 holding a secret, outside every
# root, with symbolic links to it from inside the workspace.
# Does: corral fs write, read, edit, list and grep on a sandbox, with and
# without --json; writes the guard refuses; reads and writes through the
# links; a write in a sandbox whose workspace is read-only; fs as another
# uid; ls /proc/self/fd through exec.
# Expects: the shapes of corral(1); every refusal with its one-line
# reason and nothing created; nothing of the home read or written; files
# written appear on the host owned by uid 1000; a command holds no
# descriptor beyond 0-2 unless it was given one (exec: extra_fd).
. "$top_srcdir/tests/lib/tap.sh"
. "$top_srcdir/tests/e2e/lib/testbed.sh"
. "$top_srcdir/tests/e2e/lib/corral.sh"
tb_need_root
tb_install_traps
tb_up || { echo "Bail out! no test bed"; exit 1; }

OWNER=1000              # owns the folders: the sandboxes run as it
STRANGER=1099           # another local uid, with no sandbox of its own
port=$(tb_free_port)
ws="$TB_DIR/folders/ws"
ro="$TB_DIR/folders/ref"
home="$TB_DIR/homes/owner"
mkdir -p "$ws" "$ro" "$home"
echo "read only" >"$ro/ref.txt"
echo "the owner's secret" >"$home/secret.txt"
ln -s "$home" "$ws/home-link"
ln -s "$home/secret.txt" "$ws/secret-link"
ln -s ../../homes/owner/secret.txt "$ws/relative-link"
chown -R "$OWNER:$OWNER" "$TB_DIR/folders" "$TB_DIR/homes"
chown -h "$OWNER:$OWNER" "$ws/home-link" "$ws/secret-link" "$ws/relative-link"
chmod 0755 "$TB_DIR" "$TB_DIR/folders" "$TB_DIR/homes"
corral_start_shared "$port"
corral() { corral_cli "$@"; }
as_stranger() { corral_as "$STRANGER" "$@"; }
# json_check JSON PYTHON: runs the Python assertions on the parsed JSON (o).
json_check() {
	python3 -c "import json, sys
o = json.loads(sys.argv[1])
$2" "$1"
}

corral sandbox create --root "$ws" --root "$ro:ro" --name f1 >/dev/null
check_eq "a sandbox over the workspace is created" 0 $?

# --- write, read, grep, edit, list: the plain output.
out=$(corral fs write f1 notes/a.md --content "# Notes
TODO: write the tests
done
")
check_eq "fs write exits 0" 0 $?
check_contains "fs write says what it wrote" "$out" "notes/a.md: 35 bytes (created)"
check_eq "the file is on the host, owned by the folder's owner" "$OWNER" \
	"$(stat -c %u "$ws/notes/a.md" 2>&1)"
check_eq "its new folder is the owner's too" "$OWNER" "$(stat -c %u "$ws/notes" 2>&1)"
out=$(corral fs read f1 notes/a.md)
check_eq "fs read gives the content back" "# Notes
TODO: write the tests
done" "$out"
out=$(corral fs grep f1 TODO)
check_eq "fs grep prints path:line:text" "notes/a.md:2:TODO: write the tests" "$out"
out=$(corral fs grep f1 --json 'TO+DO' notes)
json_check "$out" "assert o == {'count': 1, 'matches': [{'path': 'notes/a.md', 'line': 2,
    'text': 'TODO: write the tests'}]}, o" >/dev/null 2>&1
tap_result $? "fs grep --json (extended regex) gives {count: 1, matches: [{path, line, text}]}" "$out"
out=$(corral fs edit f1 notes/a.md --old "TODO: write" --new "DONE: wrote" --json)
json_check "$out" "assert o == {'path': 'notes/a.md', 'bytes_written': 35, 'created': False}, o" \
	>/dev/null 2>&1
tap_result $? "fs edit --json gives {path, bytes_written, created}" "$out"
check_contains "the edit is in the file" "$(cat "$ws/notes/a.md")" "DONE: wrote the tests"
out=$(corral fs edit f1 notes/a.md --old "o" --new "0" 2>&1)
rc=$?
check_eq "an edit whose old text occurs many times exits 1" 1 "$rc"
check_contains "and names the count" "$out" "occurs 3 times"
out=$(corral fs edit f1 notes/a.md --old "absent" --new "x" 2>&1)
check_contains "an edit whose old text is absent says 0 times" "$out" "occurs 0 times"
out=$(printf 'from stdin' | corral fs write f1 in.txt --json)
json_check "$out" "assert o == {'path': 'in.txt', 'bytes_written': 10, 'created': True}, o" \
	>/dev/null 2>&1
tap_result $? "fs write takes stdin; --json gives {path, bytes_written, created}" "$out"
out=$(corral fs write f1 in.txt --content again --json)
json_check "$out" "assert o['created'] is False and o['bytes_written'] == 5, o" >/dev/null 2>&1
tap_result $? "writing over a file says created: false" "$out"
out=$(corral fs read f1 in.txt --json)
json_check "$out" "assert o == {'path': 'in.txt', 'content': 'again', 'truncated': False}, o" \
	>/dev/null 2>&1
tap_result $? "fs read --json gives {path, content, truncated}" "$out"
out=$(corral fs list f1)
check_contains "fs list prints one entry a line, folders with /" "$out" "in.txt
notes/"
out=$(corral fs list f1 notes --json)
json_check "$out" "assert o == [{'name': 'a.md', 'type': 'file', 'size': 35}], o" >/dev/null 2>&1
tap_result $? "fs list --json gives [{name, type, size}]" "$out"
out=$(corral fs read f1 "$ro/ref.txt")
check_eq "an absolute path names a file of another root" "read only" "$out"

# The agent names its files as it likes; whoever lists them sees the bytes
# escaped, and no terminal control reaches them.
corral exec f1 -- sh -c 'mkdir -p "$1/odd" &&
	printf "hostile \033[2J line\n" >"$1/odd/$(printf "evil\033]0;t\007\nforged")"' sh "$ws" </dev/null
out=$(corral fs list f1 odd)
check_eq "fs list escapes a name's control bytes, on one line" 'evil\x1b]0;t\x07\x0aforged' "$out"
out=$(corral fs grep f1 hostile odd)
check_eq "fs grep escapes the path and the text" \
	'odd/evil\x1b]0;t\x07\x0aforged:1:hostile \x1b[2J line' "$out"
rm -rf "$ws/odd"

# --- Errors: one line each.
out=$(corral fs read f1 nope.txt 2>&1)
rc=$?
check_eq "reading a missing file exits 3 (not found)" 3 "$rc"
check_eq "with one line naming it" "corral: nope.txt: no such file or folder" "$out"
out=$(corral fs read f1 notes 2>&1)
check_contains "reading a folder: not a regular file" "$out" "notes: not a regular file"
out=$(corral fs read nosuch x 2>&1)
check_eq "an unknown sandbox is named" "corral: no sandbox named 'nosuch'" "$out"
head -c 1100000 /dev/zero | tr '\0' a >"$TB_DIR/big"
out=$(corral fs write f1 big.txt <"$TB_DIR/big" 2>&1)
rc=$?
check_eq "a write over the cap exits 1" 1 "$rc"
check_contains "and says the cap" "$out" "1048576"
[ ! -e "$ws/big.txt" ]; tap_result $? "and creates nothing"
cp "$TB_DIR/big" "$ws/big.txt" && chown "$OWNER:$OWNER" "$ws/big.txt"
out=$(corral fs read f1 big.txt --json | python3 -c "import json, sys
o = json.load(sys.stdin); print(len(o['content']), o['truncated'])")
check_eq "a read over 1 MiB is cut there and says truncated" "1048576 True" "$out"

# --- The write guard: refused before the sandbox is asked, nothing made.
out=$(corral fs write f1 /etc/owned --content x 2>&1)
rc=$?
check_eq "writing /etc/owned exits 4 (refused)" 4 "$rc"
check_eq "with the guard's message" \
	"corral: Writes must stay inside the workspace. outside $ws/: /etc/owned" "$out"
[ ! -e /etc/owned ]; tap_result $? "and /etc/owned does not exist on the host"
out=$(corral exec f1 -- test -e /etc/owned; echo $?)
check_eq "nor in the sandbox" 1 "$out"
out=$(corral fs write f1 ../x --content x 2>&1)
check_eq "writing ../x gets the guard's message" \
	"corral: Writes must stay inside the workspace. outside $ws/: ../x" "$out"
[ ! -e "$TB_DIR/folders/x" ]; tap_result $? "and ../x is not created"
out=$(corral fs edit f1 /etc/hostname --old a --new b 2>&1)
check_contains "an edit of an absolute path is refused the same way" "$out" \
	"outside $ws/: /etc/hostname"

# --- Links to the owner's home: nothing read or written through them.
out=$(corral fs read f1 secret-link 2>&1)
check_lacks "a link to the home's file does not read it" "$out" "the owner's secret"
check_contains "it is refused as leading outside" "$out" "leads outside the workspace"
out=$(corral fs read f1 home-link/secret.txt 2>&1)
check_lacks "through a linked folder neither" "$out" "the owner's secret"
out=$(corral fs read f1 relative-link 2>&1)
check_lacks "nor through a relative link climbing out" "$out" "the owner's secret"
out=$(corral fs read f1 "$home/secret.txt" 2>&1)
check_lacks "the home's absolute path shows nothing in the sandbox" "$out" "the owner's secret"
corral fs write f1 home-link/planted.txt --content x >/dev/null 2>&1
[ ! -e "$home/planted.txt" ]; tap_result $? "a write through the linked folder lands nowhere"
corral fs write f1 secret-link --content overwritten >/dev/null 2>&1
check_eq "a write through the file link leaves the secret as it was" "the owner's secret" \
	"$(cat "$home/secret.txt")"
out=$(corral fs grep f1 secret)
check_lacks "grep follows no link out" "$out" "the owner's secret"
out=$(corral fs list f1 home-link 2>&1)
check_lacks "list does not open the linked home" "$out" "secret.txt"

# --- A read-only root as the workspace refuses writes (the mount, and
# Landlock: the wall behind the guard).
corral sandbox create --root "$ro:ro" --root "$ws" --cwd "$ro" --name f2 >/dev/null
out=$(corral fs write f2 new.txt --content x 2>&1)
rc=$?
check_eq "a write in a read-only workspace exits 4 (refused)" 4 "$rc"
check_contains "refused inside the sandbox" "$out" "new.txt:"
[ ! -e "$ro/new.txt" ]; tap_result $? "and creates nothing there"
check_eq "reads still work there" "read only" "$(corral fs read f2 ref.txt)"

# --- Another uid: the sandbox reads as unknown.
out=$(as_stranger fs read f1 notes/a.md 2>&1)
rc=$?
check_eq "another uid's fs read exits 3 (not found: it is not told the sandbox is there)" 3 "$rc"
check_eq "and is told no such sandbox" "corral: no sandbox named 'f1'" "$out"
out=$(as_stranger fs write f1 stranger.txt --content x 2>&1)
check_eq "another uid's fs write is refused the same way" "corral: no sandbox named 'f1'" "$out"
[ ! -e "$ws/stranger.txt" ]; tap_result $? "and writes nothing"

# --- exec: extra_fd. A command started without one holds 0-2 only (3 is
# the folder ls opens). With one it finds it at 3: corral-init places it
# with the code that placed each file operation's result file at 3 and
# its input at 4 above, which is what made every result arrive.
out=$(corral exec f1 -- ls /proc/self/fd | tr '\n' ' ')
check_eq "a command given no extra descriptor holds 0, 1, 2 only" "0 1 2 3 " "$out"
out=$(corral exec f1 -- sh -c 'echo x >&3' 2>&1)
check_contains "and writing to fd 3 fails" "$out" "Bad file descriptor"

# --- A sandbox deleted while an operation runs: the client is told at
# once (a grep of the whole tree, /usr included, runs for far longer).
corral sandbox create --root "$ws" --name f3 >/dev/null
start=$(date +%s)
corral fs grep f3 no-such-text-anywhere / >"$TB_DIR/grep.out" 2>&1 &
grep_pid=$!
sleep 1
corral sandbox delete f3 >/dev/null
wait "$grep_pid"
rc=$?
check_eq "a grep whose sandbox is deleted exits 6 (unavailable)" 6 "$rc"
check_contains "and says the sandbox ended" "$(cat "$TB_DIR/grep.out")" "the sandbox ended"
[ $(($(date +%s) - start)) -lt 10 ]; tap_result $? "at once, not at the 30 s limit"

corral sandbox delete --all >/dev/null
tap_done
