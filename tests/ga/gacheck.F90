! Checking helpers shared by the Fortran programs of the GA suite, compiled
! like them with GA's Fortran integer size (8 bytes for Debian's GA).
!
! gat_begin: mpi_init, ga_initialize, a small MA heap.  gat_end(name): sums
! the failed checks of all processes with ga_igop, rank 0 prints one
! PASS/FAIL line, GA and MPI shut down, and every process stops with code 1
! if any check failed anywhere.  chk_* count a failed check and print the
! first few.  GA_TEST_INJECT_FAILURE=1 adds one failure on the last rank:
! the suite uses it to prove that a failure really fails the test.

subroutine gat_begin()
  implicit none
#include "mafdecls.fh"
#include "global.fh"
  integer :: me, np, nfail
  common /gatchk/ me, np, nfail
  integer(kind=4) :: ierr
  call mpi_init(ierr)
  call ga_initialize()
  me = ga_nodeid()
  np = ga_nnodes()
  nfail = 0
  if (.not. ma_init(MT_DBL, 65536, 524288)) call ga_error('gat_begin: ma_init failed', 0)
end subroutine gat_begin

subroutine gat_fail(what)
  implicit none
  character(len=*), intent(in) :: what
  integer :: me, np, nfail
  common /gatchk/ me, np, nfail
  nfail = nfail + 1
  if (nfail <= 10) write (0, '(a,i0,2a)') 'FAIL rank ', me, ': ', what
end subroutine gat_fail

subroutine chk_l(cond, what)
  implicit none
  logical, intent(in) :: cond
  character(len=*), intent(in) :: what
  if (.not. cond) call gat_fail(what)
end subroutine chk_l

subroutine chk_i(got, want, what)
  implicit none
  integer, intent(in) :: got, want
  character(len=*), intent(in) :: what
  character(len=200) :: msg
  if (got /= want) then
    write (msg, '(a,i0,a,i0)') ': got ', got, ', expected ', want
    call gat_fail(what // trim(msg))
  end if
end subroutine chk_i

subroutine chk_d(got, want, what)
  implicit none
  double precision, intent(in) :: got, want
  character(len=*), intent(in) :: what
  character(len=200) :: msg
  if (got /= want) then
    write (msg, '(a,g0,a,g0)') ': got ', got, ', expected ', want
    call gat_fail(what // trim(msg))
  end if
end subroutine chk_d

! For results of floating-point algorithms whose rounding depends on the
! process grid (ScaLAPACK solvers, eigensolvers): relative tolerance.
subroutine chk_near(got, want, tol, what)
  implicit none
  double precision, intent(in) :: got, want, tol
  character(len=*), intent(in) :: what
  character(len=200) :: msg
  if (.not. (abs(got - want) <= tol * max(1d0, abs(want)))) then
    write (msg, '(a,g0,a,g0)') ': got ', got, ', expected ', want
    call gat_fail(what // trim(msg))
  end if
end subroutine chk_near

subroutine chk_z(got, want, what)
  implicit none
  double complex, intent(in) :: got, want
  character(len=*), intent(in) :: what
  character(len=200) :: msg
  if (got /= want) then
    write (msg, '(a,2g0,a,2g0)') ': got ', got, ', expected ', want
    call gat_fail(what // trim(msg))
  end if
end subroutine chk_z

! Virtual nodes that ARMCI_NODE_SIZE asks for (1 when unset or 0).
integer function gat_expected_nodes()
  implicit none
  integer :: me, np, nfail
  common /gatchk/ me, np, nfail
  character(len=32) :: val
  integer :: k, stat
  call get_environment_variable('ARMCI_NODE_SIZE', val, status=stat)
  k = 0
  if (stat == 0) read (val, *, iostat=stat) k
  if (stat /= 0 .or. k <= 0) then
    gat_expected_nodes = 1
  else
    gat_expected_nodes = (np + k - 1) / k
  end if
end function gat_expected_nodes

subroutine gat_end(prog)
  implicit none
#include "mafdecls.fh"
#include "global.fh"
  character(len=*), intent(in) :: prog
  integer :: me, np, nfail
  common /gatchk/ me, np, nfail
  integer :: total, stat
  integer(kind=4) :: ierr
  character(len=8) :: val
  call get_environment_variable('GA_TEST_INJECT_FAILURE', val, status=stat)
  if (stat == 0 .and. val /= '0' .and. me == np - 1) &
    call gat_fail('injected failure (GA_TEST_INJECT_FAILURE)')
  total = nfail
  call ga_igop(MT_INT, total, 1, '+')
  if (me == 0) then
    if (total == 0) then
      write (*, '(3a,i0,a,i0,a)') 'PASS ', prog, ': ', np, ' processes, ', total, ' failed checks'
    else
      write (*, '(3a,i0,a,i0,a)') 'FAIL ', prog, ': ', np, ' processes, ', total, ' failed checks'
    end if
  end if
  flush (6)
  call ga_terminate()
  call mpi_finalize(ierr)
  ! a process with failures of its own fails even if the reduction lost them
  if (total /= 0 .or. nfail /= 0) stop 1
end subroutine gat_end
