# tests/pkg/lib.sh - shared by test_deb.sh and systemd-guest.sh (sourced
# after scripts/lib.sh; they run as root).

# Debian's own tools and python3 (pybuild), not a python of a pyenv or venv
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
need_root

# build_debs W: a clean clone of the committed HEAD into W/src, its
# build-dependencies (apt-get build-dep), libperf, and dpkg-buildpackage
# -us -uc -b; the .debs land in W.  On failure the end of the log is
# shown and the caller's fail() is called.
build_debs() {
	local w=$1 t1
	echo "== clean clone of $(git -C "$ROOT" rev-parse --short HEAD) into $w/src"
	git clone -q "$ROOT" "$w/src"
	apt_install devscripts equivs lintian fakeroot
	(cd "$w/src" && apt-get build-dep -y -q ./ >"$w/build-dep.log" 2>&1) || { tail -20 "$w/build-dep.log"; fail "apt-get build-dep"; }
	need_libperf
	echo "== dpkg-buildpackage -us -uc -b"
	t1=$SECONDS
	(cd "$w/src" && dpkg-buildpackage -us -uc -b >"$w/build.log" 2>&1) || { tail -40 "$w/build.log"; fail "dpkg-buildpackage"; }
	ok "built in $((SECONDS - t1)) s: $(cd "$w" && ls ./*.deb | tr '\n' ' ')"
}
