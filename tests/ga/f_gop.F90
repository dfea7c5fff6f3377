! GA suite, Fortran: global reductions with the op as a Fortran CHARACTER.
!
! GA's Fortran wrappers pass the op string's address on to ARMCI and drop
! its length, so ARMCI sees the characters of the op followed by whatever
! comes next in memory, with no terminating NUL. Every arithmetic op ('+',
! '*', 'max', 'min', 'absmax', 'absmin') goes through ga_igop (GA's 8-byte
! integer: armci_msg_lgop), ga_dgop, ga_sgop and nga_gop twice: once as a
! literal constant and once as a substring of a character variable holding
! all ops back to back ('maxmin+*absmaxabsmin...'), which is exactly the
! unterminated case. ga_zgop/ga_cgop ('+'), a long ga_dgop, and ga_brdcst
! of integers and doubles from every root complete it. Expected results
! are computed locally over all ranks; integers are scaled by 2^35 where
! the op allows, so 32-bit arithmetic shows.
program f_gop
  implicit none
#include "mafdecls.fh"
#include "global.fh"
#include "gavoid.fh"
  integer, parameter :: nv = 6, nlong = 5000
  character(len=40) :: opbuf
  character(len=6) :: names(6)
  integer :: first(6), last(6)
  integer :: me, np, o, k, r, ib(nv), bad
  integer :: ib2(nlong)
  double precision :: db(nv), dg(nv), dlong(nlong), e
  real :: rb(nv)
  double complex :: zb(3)
  complex :: cb(3)

  call gat_begin()
  me = ga_nodeid()
  np = ga_nnodes()

  ! all ops back to back in one variable: substrings are not NUL-terminated
  opbuf = 'maxmin+*absmaxabsmin&&||ormaxmin'
  names = ['+     ', '*     ', 'max   ', 'min   ', 'absmax', 'absmin']
  first = [7, 8, 1, 4, 9, 15]
  last = [7, 8, 3, 6, 14, 20]
  do o = 1, 6
    call chk_l(opbuf(first(o):last(o)) == trim(names(o)), 'packed op table')
  end do

  do o = 1, 6
    ! as a literal constant
    call fill(o)
    select case (o)
    case (1)
      call ga_igop(MT_INT, ib, nv, '+')
      call ga_dgop(MT_DBL, db, nv, '+')
      call ga_sgop(MT_REAL, rb, nv, '+')
      call nga_gop(MT_DBL, dg, nv, '+')
    case (2)
      call ga_igop(MT_INT, ib, nv, '*')
      call ga_dgop(MT_DBL, db, nv, '*')
      call ga_sgop(MT_REAL, rb, nv, '*')
      call nga_gop(MT_DBL, dg, nv, '*')
    case (3)
      call ga_igop(MT_INT, ib, nv, 'max')
      call ga_dgop(MT_DBL, db, nv, 'max')
      call ga_sgop(MT_REAL, rb, nv, 'max')
      call nga_gop(MT_DBL, dg, nv, 'max')
    case (4)
      call ga_igop(MT_INT, ib, nv, 'min')
      call ga_dgop(MT_DBL, db, nv, 'min')
      call ga_sgop(MT_REAL, rb, nv, 'min')
      call nga_gop(MT_DBL, dg, nv, 'min')
    case (5)
      call ga_igop(MT_INT, ib, nv, 'absmax')
      call ga_dgop(MT_DBL, db, nv, 'absmax')
      call ga_sgop(MT_REAL, rb, nv, 'absmax')
      call nga_gop(MT_DBL, dg, nv, 'absmax')
    case (6)
      call ga_igop(MT_INT, ib, nv, 'absmin')
      call ga_dgop(MT_DBL, db, nv, 'absmin')
      call ga_sgop(MT_REAL, rb, nv, 'absmin')
      call nga_gop(MT_DBL, dg, nv, 'absmin')
    end select
    call verify(o, 'literal')
    ! as an unterminated substring
    call fill(o)
    call ga_igop(MT_INT, ib, nv, opbuf(first(o):last(o)))
    call ga_dgop(MT_DBL, db, nv, opbuf(first(o):last(o)))
    call ga_sgop(MT_REAL, rb, nv, opbuf(first(o):last(o)))
    call nga_gop(MT_DBL, dg, nv, opbuf(first(o):last(o)))
    call verify(o, 'substring')
  end do

  ! complex sums
  do k = 1, 3
    zb(k) = dcmplx(dble(me + k), dble(-me * k))
    cb(k) = cmplx(real(2 * me - k), real(me + 1))
  end do
  call ga_zgop(MT_DCPL, zb, 3, opbuf(7:7))
  call ga_cgop(MT_SCPL, cb, 3, '+')
  do k = 1, 3
    call chk_z(zb(k), dcmplx(dble(np * (np - 1) / 2 + np * k), dble(-k * np * (np - 1) / 2)), &
               'ga_zgop +')
    call chk_l(cb(k) == cmplx(real(np * (np - 1) - np * k), real(np * (np + 1) / 2)), 'ga_cgop +')
  end do

  ! a long vector
  do k = 1, nlong
    dlong(k) = mod(k * 7 + me * 13, 101)
    ib2(k) = mod(k * 3 + me * 5, 37) - 18
  end do
  call ga_dgop(MT_DBL, dlong, nlong, opbuf(7:7))
  call ga_igop(MT_INT, ib2, nlong, opbuf(4:6))
  bad = 0
  do k = 1, nlong
    e = 0
    do r = 0, np - 1
      e = e + mod(k * 7 + r * 13, 101)
    end do
    if (dlong(k) /= e) bad = bad + 1
    if (ib2(k) /= minval([(mod(k * 3 + r * 5, 37) - 18, r = 0, np - 1)])) bad = bad + 1
  end do
  call chk_i(bad, 0, 'long ga_dgop +/ga_igop min: wrong elements')

  ! broadcasts (lengths in bytes)
  do r = 0, np - 1
    ib = -1
    db = -1
    if (me == r) then
      ib = [(k * 2_8**40 + r, k = 1, nv)]
      db = [(k + 0.25d0 * r, k = 1, nv)]
    end if
    call ga_brdcst(MT_INT, ib, nv * ma_sizeof(MT_INT, 1, MT_BYTE), r)
    call ga_brdcst(MT_DBL, db, nv * ma_sizeof(MT_DBL, 1, MT_BYTE), r)
    do k = 1, nv
      call chk_i(ib(k), k * 2_8**40 + r, 'ga_brdcst integer')
      call chk_d(db(k), k + 0.25d0 * r, 'ga_brdcst double')
    end do
  end do

  call gat_end('f_gop')

contains

  ! rank r's contribution to element k for op o
  integer function contrib(o, r, k)
    integer, intent(in) :: o, r, k
    integer, parameter :: f(3) = [-1, 1, 2]
    if (o == 2) then
      contrib = f(mod(r + 2 * k, 3) + 1)
    else
      contrib = mod((r + 1) * (k + 3) + 2 * r, 9) - 4
    end if
  end function contrib

  integer function scale_of(o)
    integer, intent(in) :: o
    scale_of = 2_8**35
    if (o == 2) scale_of = 1
  end function scale_of

  integer function expected(o, k)
    integer, intent(in) :: o, k
    integer :: r, v
    expected = contrib(o, 0, k)
    if (o >= 5) expected = abs(expected)
    do r = 1, np - 1
      v = contrib(o, r, k)
      select case (o)
      case (1)
        expected = expected + v
      case (2)
        expected = expected * v
      case (3)
        expected = max(expected, v)
      case (4)
        expected = min(expected, v)
      case (5)
        expected = max(expected, abs(v))
      case default
        expected = min(expected, abs(v))
      end select
    end do
  end function expected

  subroutine fill(o)
    integer, intent(in) :: o
    integer :: kk
    do kk = 1, nv
      ib(kk) = contrib(o, me, kk) * scale_of(o)
      db(kk) = contrib(o, me, kk)
      rb(kk) = real(contrib(o, me, kk))
      dg(kk) = contrib(o, me, kk)
    end do
  end subroutine fill

  subroutine verify(o, how)
    integer, intent(in) :: o
    character(len=*), intent(in) :: how
    integer :: kk
    character(len=60) :: what
    do kk = 1, nv
      write (what, '(5a)') 'op ', trim(names(o)), ' (', how, '): '
      call chk_i(ib(kk), expected(o, kk) * scale_of(o), trim(what) // ' ga_igop')
      call chk_d(db(kk), dble(expected(o, kk)), trim(what) // ' ga_dgop')
      call chk_l(rb(kk) == real(expected(o, kk)), trim(what) // ' ga_sgop')
      call chk_d(dg(kk), dble(expected(o, kk)), trim(what) // ' nga_gop')
    end do
  end subroutine verify

end program f_gop
