"""One version everywhere, from project(topoml VERSION ...) in the top
CMakeLists.txt: TOPOML_VERSION_STRING (the generated topoml/version.h),
topoml_version() as `topoml --version` prints it, topoml.pc, the CMake
package's version file and the shared library's file name."""
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))
import clitest as ct

a = ct.args()
rep = ct.Report()
src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
with open(os.path.join(src, "CMakeLists.txt")) as f:
    m = re.search(r"project\(topoml VERSION ([0-9]+\.[0-9]+\.[0-9]+)", f.read())
rep.check(m is not None, "no project(topoml VERSION x.y.z) in CMakeLists.txt")
version = m.group(1) if m else "?"

out = ct.run([a.topoml, "--version"]).stdout
rep.check(out.startswith("topoml %s " % version), "--version: %r, project %s" % (out, version))
with open(os.path.join(a.build, "core", "include", "topoml", "version.h")) as f:
    rep.check('#define TOPOML_VERSION_STRING "%s"' % version in f.read(), "version.h")
with open(os.path.join(a.build, "core", "topoml.pc")) as f:
    rep.check("\nVersion: %s\n" % version in f.read(), "topoml.pc")
with open(os.path.join(a.build, "core", "topomlConfigVersion.cmake")) as f:
    rep.check('set(PACKAGE_VERSION "%s")' % version in f.read(), "topomlConfigVersion.cmake")
# (the library of this build, not those of the sanitizer sub-builds below it)
libs = glob.glob(os.path.join(a.build, "core", "libtopoml.so.%s" % version))
rep.check(len(libs) == 1, "libtopoml.so.%s: %r" % (version, libs))
# The header in the source tree carries no number of its own.
with open(os.path.join(src, "core", "include", "topoml", "topoml.h")) as f:
    rep.check(re.search(r'#define TOPOML_VERSION_STRING "', f.read()) is None,
              "topoml.h writes the version itself")
rep.finish()
