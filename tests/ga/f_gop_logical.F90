! GA suite, Fortran: the integer-only reduction ops through ga_igop.
!
! ga_igop on GA's 8-byte Fortran integers becomes armci_msg_lgop, and the
! ARMCIs GA ships with accept the logical ops '&&'/'land' and '||'/'lor'
! (0/1 results) and the bitwise 'band', 'bor' and 'or'. Each op is passed
! as a literal constant and as an unterminated substring of a character
! variable holding the ops back to back. Inputs: 0/1 patterns chosen so
! that every outcome occurs at 1, 2 and 4 processes, and bit patterns with
! bits above 32 for the bitwise ops; expected values are computed locally.
program f_gop_logical
  implicit none
#include "mafdecls.fh"
#include "global.fh"
  integer, parameter :: nv = 8
  character(len=40) :: opbuf
  integer :: me, np, x(nv), k, o
  integer :: first(7), last(7), kind_of(7)
  character(len=4) :: names(7)

  call gat_begin()
  me = ga_nodeid()
  np = ga_nnodes()
  opbuf = '&&||orlandlorbandborxx'
  names = ['&&  ', '||  ', 'or  ', 'land', 'lor ', 'band', 'bor ']
  first = [1, 3, 5, 7, 11, 14, 18]
  last = [2, 4, 6, 10, 13, 17, 20]
  kind_of = [1, 2, 4, 1, 2, 3, 4] ! 1 logical and, 2 logical or, 3 bitwise and, 4 bitwise or
  do o = 1, 7
    call chk_l(opbuf(first(o):last(o)) == trim(names(o)), 'packed op table')
  end do

  do o = 1, 7
    call fill(kind_of(o))
    select case (o)
    case (1)
      call ga_igop(MT_INT, x, nv, '&&')
    case (2)
      call ga_igop(MT_INT, x, nv, '||')
    case (3)
      call ga_igop(MT_INT, x, nv, 'or')
    case (4)
      call ga_igop(MT_INT, x, nv, 'land')
    case (5)
      call ga_igop(MT_INT, x, nv, 'lor')
    case (6)
      call ga_igop(MT_INT, x, nv, 'band')
    case (7)
      call ga_igop(MT_INT, x, nv, 'bor')
    end select
    do k = 1, nv
      call chk_i(x(k), expected(kind_of(o), k), 'ga_igop ' // trim(names(o)) // ' (literal)')
    end do
    call fill(kind_of(o))
    call ga_igop(MT_INT, x, nv, opbuf(first(o):last(o)))
    do k = 1, nv
      call chk_i(x(k), expected(kind_of(o), k), 'ga_igop ' // trim(names(o)) // ' (substring)')
    end do
  end do
  call gat_end('f_gop_logical')

contains

  ! 0/1: k mod 4 = 0 all ones, 1 all zeros, 2 only rank 0, 3 all but rank 0
  integer function truth(r, k)
    integer, intent(in) :: r, k
    select case (mod(k, 4))
    case (0)
      truth = 1
    case (1)
      truth = 0
    case (2)
      truth = merge(1, 0, r == 0)
    case default
      truth = merge(1, 0, r /= 0)
    end select
  end function truth

  integer function bits(r, k)
    integer, intent(in) :: r, k
    bits = ior(ior(ishft(1_8, mod(r + k, 6)), iand(int(k, 8), 48_8)), 64_8)
    bits = ior(bits, ishft(1_8, 40 + mod(r + k, 3)))
  end function bits

  subroutine fill(kd)
    integer, intent(in) :: kd
    integer :: kk
    do kk = 1, nv
      if (kd <= 2) then
        x(kk) = truth(me, kk)
      else
        x(kk) = bits(me, kk)
      end if
    end do
  end subroutine fill

  integer function expected(kd, k)
    integer, intent(in) :: kd, k
    integer :: r
    expected = 0
    do r = 0, np - 1
      select case (kd)
      case (1)
        if (r == 0) then
          expected = truth(r, k)
        else
          expected = merge(1, 0, expected /= 0 .and. truth(r, k) /= 0)
        end if
      case (2)
        if (r == 0) then
          expected = truth(r, k)
        else
          expected = merge(1, 0, expected /= 0 .or. truth(r, k) /= 0)
        end if
      case (3)
        if (r == 0) then
          expected = bits(r, k)
        else
          expected = iand(expected, bits(r, k))
        end if
      case default
        if (r == 0) then
          expected = bits(r, k)
        else
          expected = ior(expected, bits(r, k))
        end if
      end select
    end do
  end function expected

end program f_gop_logical
