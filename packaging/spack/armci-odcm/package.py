# Spack recipe for ARMCI-ODCM. Use it from a repository of your own:
#   spack repo create myrepo && cp -r packaging/spack/armci-odcm myrepo/packages/
#   spack install armci-odcm ^mpich        (or ^openmpi, ^mvapich2, ^intel-oneapi-mpi)
# Spack's MPI virtual package picks the implementation; the recipe maps it to
# the build's -Dmpi (Open MPI or the MPICH ABI family).

from spack.package import *


class ArmciOdcm(MesonPackage):
    """ARMCI-compatible one-sided communication over InfiniBand verbs with
    on-demand connection management; a userspace verbs device (softib) runs
    it without an HCA."""

    # The project has no public address yet: point these at your clone
    # (a local checkout works too: git = "file:///path/to/armci-odcm").
    homepage = "https://example.invalid/armci-odcm"
    git = "https://example.invalid/armci-odcm.git"

    license("BSD-3-Clause")

    version("main", branch="main")

    variant("tests", default=False, description="Build the test suites (meson test)")
    variant(
        "fault_injection",
        default=False,
        description="Compile in the fault-injection points the test suites use",
    )

    depends_on("meson@0.63:", type="build")
    depends_on("ninja", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("mpi")
    depends_on("rdma-core")  # headers only at build time; libibverbs is loaded at run time

    def meson_args(self):
        mpi = "openmpi" if self.spec.satisfies("^openmpi") else "mpich"
        return [
            "-Dmpi=" + mpi,
            "-Dbench=false",
            "-Dtests=" + ("true" if "+tests" in self.spec else "false"),
            "-Dfault_injection=" + ("true" if "+fault_injection" in self.spec else "false"),
        ]

    def setup_run_environment(self, env):
        env.prepend_path("PKG_CONFIG_PATH", self.prefix.lib.pkgconfig)
