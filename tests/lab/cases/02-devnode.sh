# /dev/collx: a character device any user may open (mode 0666), as
# /dev/infiniband/uverbs* are; what a user can do is bounded per process.
. "$COLLX_SRC/tests/lab/lib.sh"
[ -c /dev/collx ] || lab_fail "/dev/collx missing or not a character device"
mode=$(stat -c %a /dev/collx)
[ "$mode" = 666 ] || lab_fail "/dev/collx mode $mode, want 666"
misc=$(sed -n 's/^ *\([0-9]*\) collx$/\1/p' /proc/misc)
[ -n "$misc" ] || lab_fail "collx not in /proc/misc"
[ "$(stat -c %t:%T /dev/collx)" = "a:$(printf %x "$misc")" ] ||
	lab_fail "/dev/collx is $(stat -c %t:%T /dev/collx), misc minor $misc"
setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$COLLX_SRC/user/tools/collx-info" >/dev/null ||
	lab_fail "user nobody cannot open /dev/collx"
echo "/dev/collx: char 10:$misc mode $mode, opened as nobody"
