! The smallest Global Arrays program in Fortran, built by tests/install/run.sh
! against Debian's GA and an installed libarmci with the README's GA link
! line: rank 0 puts a vector into a global array spread over every process
! (so over both virtual nodes), and every rank reads all of it back and
! checks each element. GA's integers are 8 bytes (-fdefault-integer-8).
program ga_app
  implicit none
#include "mafdecls.fh"
#include "global.fh"
  integer, parameter :: n = 1000
  integer :: me, np, g_a, i, nbad(1)
  integer(kind=4) :: ierr
  double precision :: buf(n)

  call mpi_init(ierr)
  call ga_initialize()
  if (.not. ma_init(MT_DBL, 65536, 65536)) call ga_error('ma_init failed', 0)
  me = ga_nodeid()
  np = ga_nnodes()
  if (.not. ga_create(MT_DBL, n, 1, 'v', 0, 0, g_a)) call ga_error('ga_create failed', 0)
  if (me == 0) then
    do i = 1, n
      buf(i) = dble(3 * i + 1)
    end do
    call ga_put(g_a, 1, n, 1, 1, buf, n)
  end if
  call ga_sync()
  buf = 0
  call ga_get(g_a, 1, n, 1, 1, buf, n)
  nbad(1) = 0
  do i = 1, n
    if (buf(i) /= dble(3 * i + 1)) nbad(1) = nbad(1) + 1
  end do
  call ga_igop(1, nbad, 1, '+')
  if (me == 0 .and. nbad(1) == 0) write (*, '(a,i0,a)') 'install-ga-fortran: ', np, &
    ' processes, global array verified'
  if (.not. ga_destroy(g_a)) call ga_error('ga_destroy failed', 0)
  call ga_terminate()
  call mpi_finalize(ierr)
  if (nbad(1) /= 0) stop 1
end program ga_app
