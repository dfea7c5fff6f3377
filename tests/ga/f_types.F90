! GA suite, Fortran: every Fortran element type through the one-sided paths.
!
! For MT_INT (GA's 8-byte Fortran integer, i.e. C long and ARMCI's long
! accumulate), MT_REAL, MT_DBL, MT_SCPL and MT_DCPL: nga_create, nga_put
! by column bands from every process, nga_get, nga_acc from every process
! with a per-type alpha (complex alphas for complex arrays), ga_fill,
! ga_zero, ga_copy and ga_duplicate, and nga_strided_put/get/acc with skips
! in both dimensions (elements off the stride must stay untouched).
! Integer values are multiples of 2^33, so a 4-byte path anywhere shows;
! all values are small integers otherwise, so comparisons are exact.
! The buffers of the different types go through the explicit interfaces of
! gavoid.fh (assumed-type dummies; GA takes them as void *).
program f_types
  implicit none
#include "mafdecls.fh"
#include "global.fh"
#include "gavoid.fh"
  integer, parameter :: n = 10, m = 8
  integer :: me, np, t
  integer :: types(5)
  character(len=8) :: names(5)

  call gat_begin()
  me = ga_nodeid()
  np = ga_nnodes()
  types = [MT_INT, MT_REAL, MT_DBL, MT_SCPL, MT_DCPL]
  names = ['integer ', 'real    ', 'double  ', 'complex ', 'dcomplex']
  do t = 1, 5
    call run_type(types(t), trim(names(t)))
  end do
  call gat_end('f_types')

contains

  double complex function val(mt, i, j)
    integer, intent(in) :: mt, i, j
    double precision :: re, im
    re = mod(7 * i + 3 * j, 13) - 6
    im = 0
    if (mt == MT_SCPL .or. mt == MT_DCPL) im = mod(2 * i + 5 * j, 9) - 4
    if (mt == MT_INT) re = re * 2d0**33
    val = dcmplx(re, im)
  end function val

  double complex function alpha_of(mt)
    integer, intent(in) :: mt
    alpha_of = (3d0, 0d0)
    if (mt == MT_SCPL .or. mt == MT_DCPL) alpha_of = (1d0, -2d0)
  end function alpha_of

  ! One-sided operations with values held as double complex (ldz x nc),
  ! converted to the array's type on the way: op 'p' put, 'g' get, 'a' acc,
  ! 'P'/'G'/'A' strided; gets convert the result back into z.
  subroutine xfer(op, g, mt, lo, hi, skip, z, ldz, nc, alpha)
    character, intent(in) :: op
    integer, intent(in) :: g, mt, lo(2), hi(2), skip(2), ldz, nc
    double complex, intent(inout) :: z(ldz, nc)
    double complex, intent(in) :: alpha
    integer :: ib(ldz, nc)
    real :: rb(ldz, nc)
    double precision :: db(ldz, nc)
    complex :: cb(ldz, nc)
    double complex :: zb(ldz, nc)
    integer :: ia
    real :: ra
    double precision :: da
    complex :: ca
    logical :: back
    back = op == 'g' .or. op == 'G'
    ia = int(dble(alpha), kind=8)
    ra = real(dble(alpha))
    da = dble(alpha)
    ca = cmplx(alpha, kind=4)
    select case (mt)
    case (MT_INT)
      ib = int(dble(z), kind=8)
      call one(op, g, lo, hi, skip, ldz, ib, ia)
      if (back) z = dcmplx(dble(ib), 0d0)
    case (MT_REAL)
      rb = real(dble(z))
      call one(op, g, lo, hi, skip, ldz, rb, ra)
      if (back) z = dcmplx(dble(rb), 0d0)
    case (MT_DBL)
      db = dble(z)
      call one(op, g, lo, hi, skip, ldz, db, da)
      if (back) z = dcmplx(db, 0d0)
    case (MT_SCPL)
      cb = cmplx(z, kind=4)
      call one(op, g, lo, hi, skip, ldz, cb, ca)
      if (back) z = dcmplx(cb)
    case default
      zb = z
      call one(op, g, lo, hi, skip, ldz, zb, alpha)
      if (back) z = zb
    end select
  end subroutine xfer

  subroutine one(op, g, lo, hi, skip, ldz, buf, a)
    character, intent(in) :: op
    integer, intent(in) :: g, lo(2), hi(2), skip(2), ldz
    type(*) :: buf(*), a
    select case (op)
    case ('p')
      call nga_put(g, lo, hi, buf, [ldz])
    case ('g')
      call nga_get(g, lo, hi, buf, [ldz])
    case ('a')
      call nga_acc(g, lo, hi, buf, [ldz], a)
    case ('P')
      call nga_strided_put(g, lo, hi, skip, buf, [ldz])
    case ('G')
      call nga_strided_get(g, lo, hi, skip, buf, [ldz])
    case ('A')
      call nga_strided_acc(g, lo, hi, skip, buf, [ldz], a)
    end select
  end subroutine one

  subroutine run_type(mt, tname)
    integer, intent(in) :: mt
    character(len=*), intent(in) :: tname
    integer :: g_a, g_b, i, j, first, last, bad, nr, nc
    double complex :: z(n, m), w(n, m), a, zfill
    integer :: ifill
    real :: rfill
    double precision :: dfill
    complex :: cfill

    a = (0d0, 0d0)
    call chk_l(nga_create(mt, 2, [n, m], 'typed', [-1, -1], g_a), tname // ' nga_create')
    call ga_zero(g_a)
    ! column band of this process
    first = m * me / np + 1
    last = m * (me + 1) / np
    do j = 1, m
      do i = 1, n
        z(i, j) = val(mt, i, j)
      end do
    end do
    if (first <= last) call xfer('p', g_a, mt, [1, first], [n, last], [1, 1], z(1, first), n, last - first + 1, a)
    call ga_sync()
    w = (-99d0, 0d0)
    call xfer('g', g_a, mt, [1, 1], [n, m], [1, 1], w, n, m, a)
    call chk_i(count(w /= z), 0, tname // ' nga_put/nga_get: wrong elements')

    ! duplicate + copy, then everybody accumulates alpha * val
    call chk_l(ga_duplicate(g_a, g_b, 'typed copy'), tname // ' ga_duplicate')
    call ga_copy(g_a, g_b)
    a = alpha_of(mt)
    w = z
    call xfer('a', g_b, mt, [1, 1], [n, m], [1, 1], w, n, m, a)
    call ga_sync()
    call xfer('g', g_b, mt, [1, 1], [n, m], [1, 1], w, n, m, a)
    bad = 0
    do j = 1, m
      do i = 1, n
        if (w(i, j) /= z(i, j) + np * a * z(i, j)) bad = bad + 1
      end do
    end do
    call chk_i(bad, 0, tname // ' nga_acc: wrong elements')

    ! fill with -3 (-3 + 2i), zero
    ifill = -3
    rfill = -3
    dfill = -3
    cfill = (-3.0, 2.0)
    zfill = (-3d0, 2d0)
    select case (mt)
    case (MT_INT)
      call ga_fill(g_b, ifill)
    case (MT_REAL)
      call ga_fill(g_b, rfill)
    case (MT_DBL)
      call ga_fill(g_b, dfill)
    case (MT_SCPL)
      call ga_fill(g_b, cfill)
    case default
      call ga_fill(g_b, zfill)
    end select
    if (mt /= MT_SCPL .and. mt /= MT_DCPL) zfill = (-3d0, 0d0)
    call xfer('g', g_b, mt, [1, 1], [n, m], [1, 1], w, n, m, a)
    call chk_i(count(w /= zfill), 0, tname // ' ga_fill: wrong elements')
    call ga_zero(g_b)
    call xfer('g', g_b, mt, [1, 1], [n, m], [1, 1], w, n, m, a)
    call chk_i(count(w /= (0d0, 0d0)), 0, tname // ' ga_zero: wrong elements')
    call ga_sync()

    ! strided: rows 2, 4, ..., 10 and columns 1, 4, 7 (5 x 3 elements)
    nr = 5
    nc = 3
    do j = 1, nc
      do i = 1, nr
        z(i, j) = val(mt, 2 * i, 3 * j - 2)
      end do
    end do
    if (me == np - 1) call xfer('P', g_b, mt, [2, 1], [n, m], [2, 3], z, n, m, a)
    call ga_sync()
    w = z
    call xfer('A', g_b, mt, [2, 1], [n, m], [2, 3], w, n, m, a)
    call ga_sync()
    w = (-99d0, 0d0)
    call xfer('G', g_b, mt, [2, 1], [n, m], [2, 3], w, n, m, a)
    bad = 0
    do j = 1, nc
      do i = 1, nr
        if (w(i, j) /= z(i, j) + np * a * z(i, j)) bad = bad + 1
      end do
    end do
    call chk_i(bad, 0, tname // ' nga_strided_put/acc/get: wrong elements')
    call xfer('g', g_b, mt, [1, 1], [n, m], [1, 1], w, n, m, a)
    bad = 0
    do j = 1, m
      do i = 1, n
        if ((mod(i, 2) /= 0 .or. mod(j - 1, 3) /= 0) .and. w(i, j) /= (0d0, 0d0)) bad = bad + 1
      end do
    end do
    call chk_i(bad, 0, tname // ' strided ops wrote off the stride')

    call ga_sync()
    call chk_l(ga_destroy(g_b), tname // ' ga_destroy copy')
    call chk_l(ga_destroy(g_a), tname // ' ga_destroy')
  end subroutine run_type

end program f_types
