package glance

import (
	"path"
	"strings"
)

// shellVarOK reports whether a command may assign (or loop over) the
// variable name: only lowercase names, and none a program or bash itself
// reads (http_proxy and the other *_proxy, auto_resume, histchars). PATH,
// HOME, IFS, LD_*, GIT_*, BASH_* and every other uppercase name are out.
func shellVarOK(name string) bool {
	if name == "" || name == "_" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return !strings.HasSuffix(name, "proxy") && name != "auto_resume" && name != "histchars"
}

// safeDevices are the device files a command may name.
//
// With them, the kernel's read-only reports whose reading changes nothing
// (unlike /proc/kmsg, which consumes the messages it shows).
const safeDevices = "/dev/null /dev/stdin /dev/stdout /dev/stderr /dev/zero /dev/urandom /dev/random " +
	"/proc/meminfo /proc/cpuinfo /proc/loadavg /proc/uptime /proc/version /proc/stat /proc/swaps /proc/mounts " +
	"/proc/filesystems /proc/partitions /proc/cgroups /proc/self/status /proc/self/limits /proc/self/cgroup " +
	"/proc/self/mountinfo"

// kernelTree:  the top directories of device and kernel files: opening
// one can arm a watchdog (/dev/watchdog) or consume messages (/proc/kmsg).
func kernelTree(top string) bool { return top == "dev" || top == "proc" || top == "sys" }

// deviceish reports whether p, read as a path, names a file under /dev,
// /proc or /sys other than the safe devices (also through "..").
func deviceish(p string) bool {
	if !strings.Contains(p, "dev") && !strings.Contains(p, "proc") && !strings.Contains(p, "sys") {
		return false
	}
	c := path.Clean(p)
	if inSet(safeDevices, c) {
		return false
	}
	climbs := c[0] == '/' || strings.HasPrefix(c, "..")
	c = strings.TrimLeft(c, "/")
	for strings.HasPrefix(c, "../") {
		c = c[3:]
	}
	top, _, _ := strings.Cut(c, "/")
	return kernelTree(top) && climbs
}

// namesDevice reports whether a field names a device or kernel file
// anywhere a program would read a path from it: the whole field, a value
// after "=", ":" or ",", a value glued to a short option (-f/dev/x), or a
// path after "@" (curl-style @file).
func namesDevice(s string) bool {
	if deviceish(s) {
		return true
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '=', ':', ',', '@':
			if deviceish(s[i+1:]) {
				return true
			}
		case '/':
			// Any /dev, /proc or /sys that starts a path inside the field.
			if i > 0 && !pathByte(s[i-1]) && deviceish(s[i:]) {
				return true
			}
		}
	}
	return len(s) > 2 && s[0] == '-' && s[1] != '-' && strings.ContainsAny(s, "/") &&
		deviceish(s[strings.IndexAny(s, "/."):])
}

func pathByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == '/'
}

// pathOK reports whether a field may be handed to a program that reads
// files. A known field must not name a device or kernel file. An unknown
// field is accepted only when what it can expand to is pinned: a glob or a
// tilde (pathname expansion never adds a "/", so a relative pattern stays
// in the workspace) without "..", and, for an absolute pattern, with its
// first directory spelled out and not /dev, /proc or /sys. A parameter the
// command did not bind (glob false) could be anything. When params is
// true the verb opens no file it is given, and every field passes.
func pathOK(a arg, params bool) bool {
	if params {
		return true // the verb opens nothing: ls /dev, echo $HOME
	}
	if a.known {
		return !namesDevice(a.v)
	}
	if !a.glob {
		return params
	}
	p := a.prefix
	if a.tilde {
		if !strings.HasPrefix(p, "~") {
			return false // ~user: another account's home, from passwd
		}
		p = strings.TrimPrefix(p, "~")
		return !strings.Contains(p, "..") && (p == "" || p[0] == '/')
	}
	if strings.Contains(a.v, "..") || namesDevice(a.v) || namesDevice(p) {
		return false
	}
	if !strings.HasPrefix(p, "/") {
		return true
	}
	top, _, complete := strings.Cut(strings.TrimLeft(p, "/"), "/")
	return complete && !kernelTree(top)
}
