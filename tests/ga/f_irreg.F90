! GA suite, Fortran: irregular distributions and local access, in 3-D.
!
! nga_create_irreg with uneven block boundaries in two of three dimensions;
! nga_inquire, nga_distribution, nga_locate and nga_locate_region must
! agree with the map. nga_put of k-slabs by every process (each slab
! crosses all owners), nga_get of an inner 3-D patch into a buffer with
! padded leading dimensions, nga_acc from everybody, nga_access of the
! local block through dbl_mb (GA's MA-based Fortran pointer), ga_duplicate
! with ga_compare_distr and ga_copy. Values are small integers: exact.
program f_irreg
  implicit none
#include "mafdecls.fh"
#include "global.fh"
  integer, parameter :: n1 = 11, n2 = 9, n3 = 5
  integer :: me, np, g_a, g_b, nblock(3), map(5), nmap, dims(3), typ, nd
  integer :: lo(3), hi(3), ld(2), p, k, i, j, owner, np_reg, bad
  integer :: owners(0:3), rmap(6, 4), procs(4)
  integer(kind=8) :: idx
  double precision :: slab(n1, n2), buf(n1 + 2, n2 + 1, n3), alpha
  double precision, external :: val3

  call gat_begin()
  me = ga_nodeid()
  np = ga_nnodes()

  ! blocks: rows split at 4 (and 1), columns at 7, no split along k
  if (np >= 4) then
    nblock = [2, 2, 1]
    map(1:5) = [1, 4, 1, 7, 1]
    nmap = 5
  else if (np >= 2) then
    nblock = [2, 1, 1]
    map(1:4) = [1, 4, 1, 1]
    nmap = 4
  else
    nblock = [1, 1, 1]
    map(1:3) = [1, 1, 1]
    nmap = 3
  end if
  dims = [n1, n2, n3]
  call chk_l(nga_create_irreg(MT_DBL, 3, dims, 'irreg 3-D', map(1:nmap), nblock, g_a), &
             'nga_create_irreg')
  call nga_inquire(g_a, typ, nd, dims)
  call chk_i(typ, MT_DBL, 'nga_inquire type')
  call chk_i(nd, 3, 'nga_inquire ndim')
  call chk_l(all(dims == [n1, n2, n3]), 'nga_inquire dims')

  ! every block of the map is owned by exactly one process
  owners = 0
  do p = 0, np - 1
    call nga_distribution(g_a, p, lo, hi)
    if (p >= product(nblock)) then
      call chk_l(any(hi < lo), 'a process beyond the blocks owns nothing')
      cycle
    end if
    i = block_of(lo(1), map(1:nblock(1)))
    j = block_of(lo(2), map(nblock(1) + 1:nblock(1) + nblock(2)))
    call chk_l(i > 0 .and. j > 0 .and. lo(3) == 1 .and. hi(3) == n3, 'block starts on the map')
    if (i > 0 .and. j > 0) then
      owners((i - 1) + 2 * (j - 1)) = owners((i - 1) + 2 * (j - 1)) + 1
      call chk_i(hi(1), block_end(i, map(1:nblock(1)), n1), 'block end, dim 1')
      call chk_i(hi(2), block_end(j, map(nblock(1) + 1:nblock(1) + nblock(2)), n2), &
                 'block end, dim 2')
    end if
    call chk_l(nga_locate(g_a, hi, owner), 'nga_locate')
    call chk_i(owner, p, 'nga_locate owner of a block corner')
  end do
  call chk_i(sum(owners), product(nblock), 'blocks owned in all')
  call chk_l(nga_locate_region(g_a, [1, 1, 1], [n1, n2, n3], rmap, procs, np_reg), &
             'nga_locate_region')
  call chk_i(np_reg, product(nblock), 'owners of the whole array')

  ! each process puts the k-planes k = me + 1, me + 1 + np, ...
  call ga_zero(g_a)
  do k = me + 1, n3, np
    do j = 1, n2
      do i = 1, n1
        slab(i, j) = val3(i, j, k)
      end do
    end do
    call nga_put(g_a, [1, 1, k], [n1, n2, k], slab, [n1, n2])
  end do
  call ga_sync()
  call check_patch(g_a, [1, 1, 1], [n1, n2, n3], 1d0, 'nga_put/nga_get whole')
  call check_patch(g_a, [3, 2, 2], [n1 - 1, n2 - 2, n3], 1d0, 'nga_get inner patch')

  ! local block through nga_access
  call nga_distribution(g_a, me, lo, hi)
  if (all(hi >= lo)) then
    call nga_access(g_a, lo, hi, idx, ld)
    bad = 0
    do k = lo(3), hi(3)
      do j = lo(2), hi(2)
        do i = lo(1), hi(1)
          if (dbl_mb(idx + (i - lo(1)) + (j - lo(2)) * ld(1) + (k - lo(3)) * ld(1) * ld(2)) &
              /= val3(i, j, k)) bad = bad + 1
        end do
      end do
    end do
    call nga_release(g_a, lo, hi)
    call chk_i(bad, 0, 'nga_access: wrong local elements')
  end if

  ! duplicate, copy, accumulate
  call chk_l(ga_duplicate(g_a, g_b, 'irreg copy'), 'ga_duplicate')
  call chk_l(ga_compare_distr(g_a, g_b), 'ga_compare_distr of a duplicate')
  call ga_copy(g_a, g_b)
  do k = 1, n3
    do j = 1, n2
      do i = 1, n1
        buf(i, j, k) = val3(i, j, k)
      end do
    end do
  end do
  alpha = 2 * (me + 1)
  call nga_acc(g_b, [1, 1, 1], [n1, n2, n3], buf, [n1 + 2, n2 + 1], alpha)
  call ga_sync()
  call check_patch(g_b, [1, 1, 1], [n1, n2, n3], 1d0 + np * (np + 1), 'nga_acc')

  call ga_sync()
  call chk_l(ga_destroy(g_b), 'ga_destroy copy')
  call chk_l(ga_destroy(g_a), 'ga_destroy')
  call gat_end('f_irreg')

contains

  ! index of the block that starts at first, 0 if none
  integer function block_of(first, starts)
    integer, intent(in) :: first, starts(:)
    integer :: b
    block_of = 0
    do b = 1, size(starts)
      if (starts(b) == first) block_of = b
    end do
  end function block_of

  integer function block_end(b, starts, n)
    integer, intent(in) :: b, starts(:), n
    if (b < size(starts)) then
      block_end = starts(b + 1) - 1
    else
      block_end = n
    end if
  end function block_end

  subroutine check_patch(g, plo, phi, scale, what)
    integer, intent(in) :: g, plo(3), phi(3)
    double precision, intent(in) :: scale
    character(len=*), intent(in) :: what
    double precision :: got(n1 + 2, n2 + 1, n3)
    integer :: a, b, c, nbad
    got = -999
    call nga_get(g, plo, phi, got, [n1 + 2, n2 + 1])
    nbad = 0
    do c = plo(3), phi(3)
      do b = plo(2), phi(2)
        do a = plo(1), phi(1)
          if (got(a - plo(1) + 1, b - plo(2) + 1, c - plo(3) + 1) /= scale * val3(a, b, c)) then
            if (nbad == 0) call chk_d(got(a - plo(1) + 1, b - plo(2) + 1, c - plo(3) + 1), &
                                      scale * val3(a, b, c), what)
            nbad = nbad + 1
          end if
        end do
      end do
    end do
    call chk_i(nbad, 0, what // ': wrong elements')
  end subroutine check_patch

end program f_irreg

double precision function val3(i, j, k)
  implicit none
  integer, intent(in) :: i, j, k
  val3 = mod(5 * i + 3 * j + 7 * k, 17) - 8
end function val3
