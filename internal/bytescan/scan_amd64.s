//go:build amd64 && !purego

#include "textflag.h"

// Constants are broadcast with VEX-encoded moves only (VMOVD, not MOVD):
// a legacy SSE instruction after AVX code costs a state transition of
// about a microsecond on the machines this was measured on.

#define BROADCAST(val, reg) \
	MOVL $val, AX \
	VMOVD AX, X0 \
	VPBROADCASTB X0, reg

// ALPHABET sets dst to zero in each byte of src that is a standard base64
// alphabet character and to non-zero in every other, with two nibble table
// lookups (Mula and Lemire, "Faster Base64 Encoding and Decoding using AVX2
// Instructions", 2018): a byte is valid exactly when the bit sets its low
// and its high nibble select do not meet. Uses Y2, Y3; needs 0x0F in every
// byte of Y8 and the two tables in Y9 (low) and Y10 (high).
#define ALPHABET(src, dst) ALPHABET_USING(src, Y2, Y3, dst)

// ALPHABET_USING is ALPHABET with its two scratch registers named, so that
// two blocks can be tested side by side.
#define ALPHABET_USING(src, t1, t2, dst) \
	VPSRLD  $4, src, t1 \
	VPAND   t1, Y8, t1 \
	VPAND   src, Y8, t2 \
	VPSHUFB t1, Y10, t1 \
	VPSHUFB t2, Y9, t2 \
	VPAND   t1, t2, dst

#define ALPHABET_CONSTANTS \
	BROADCAST(0x0F, Y8) \
	VBROADCASTI128 alphabetLow<>(SB), Y9 \
	VBROADCASTI128 alphabetHigh<>(SB), Y10

// The tables of ALPHABET, by nibble value 0 to 15 (little-endian words).
// Low nibble: 0x15, 0x11 x 9, 0x13, 0x1A, 0x1B x 3, 0x1A.
DATA alphabetLow<>+0(SB)/8, $0x1111111111111115
DATA alphabetLow<>+8(SB)/8, $0x1A1B1B1B1A131111
GLOBL alphabetLow<>(SB), RODATA|NOPTR, $16
// High nibble: 0x10, 0x10, 0x01, 0x02, 0x04, 0x08, 0x04, 0x08, 0x10 x 8.
DATA alphabetHigh<>+0(SB)/8, $0x0804080402011010
DATA alphabetHigh<>+8(SB)/8, $0x1010101010101010
GLOBL alphabetHigh<>(SB), RODATA|NOPTR, $16

// func eolAVX2(b []byte) int
TEXT ·eolAVX2(SB), NOSPLIT, $0-32
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	MOVQ SI, DI
	SHRQ $5, CX
	JZ   eolnone
	BROADCAST(0x0A, Y8)
	BROADCAST(0x0D, Y9)

eolloop:
	VMOVDQU   (SI), Y1
	VPCMPEQB  Y8, Y1, Y2
	VPCMPEQB  Y9, Y1, Y3
	VPOR      Y2, Y3, Y2
	VPMOVMSKB Y2, AX
	TESTL     AX, AX
	JNZ       eolfound
	ADDQ      $32, SI
	DECQ      CX
	JNZ       eolloop
	VZEROUPPER

eolnone:
	MOVQ $-1, ret+24(FP)
	RET

eolfound:
	VZEROUPPER
	BSFL AX, AX
	SUBQ DI, SI
	ADDQ SI, AX
	MOVQ AX, ret+24(FP)
	RET

// func stringEndAVX2(b []byte) (end, plain int)
//
// end: the first '"', '\\' or byte below 0x20 (unsigned: min(x, 0x1F) ==
// x), or -1. plain: the first byte that is not base64 alphabet, or -1 when
// every byte scanned (up to end's block) is.
//
// While the alphabet run lasts, only the alphabet is tested, two blocks at a
// time: '"', '\\' and the control bytes are all outside it, so a block of
// alphabet bytes holds no end. From the block where the run stops, only the
// end is looked for. An audio payload is one long run, so most of it meets
// the cheaper loop.
TEXT ·stringEndAVX2(SB), NOSPLIT, $0-40
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	MOVQ SI, DI
	MOVQ $-1, R9
	SHRQ $5, CX
	JZ   strnone
	ALPHABET_CONSTANTS
	VPXOR Y11, Y11, Y11

runpair:
	CMPQ    CX, $2
	JB      runone
	VMOVDQU (SI), Y1
	VMOVDQU 32(SI), Y5
	ALPHABET_USING(Y1, Y2, Y3, Y3)
	ALPHABET_USING(Y5, Y4, Y6, Y6)
	VPOR    Y3, Y6, Y12
	VPTEST  Y12, Y12
	JNZ     runpairend
	ADDQ    $64, SI
	SUBQ    $2, CX
	JMP     runpair

runpairend:
	VPTEST  Y3, Y3
	JNZ     runend
	ADDQ    $32, SI // the run stops in the second block
	DECQ    CX
	VMOVDQU Y6, Y3
	JMP     runend

runone:
	TESTQ   CX, CX
	JZ      strdone
	VMOVDQU (SI), Y1
	ALPHABET(Y1, Y3)
	VPTEST  Y3, Y3
	JNZ     runend
	ADDQ    $32, SI
	DECQ    CX
	JMP     runone

runend:
	// Y3 is non-zero at the non-alphabet bytes of the block at SI.
	VPCMPEQB  Y11, Y3, Y3 // 0xFF where valid
	VPMOVMSKB Y3, BX
	NOTL      BX
	BSFL      BX, BX
	MOVQ      SI, R9
	SUBQ      DI, R9
	ADDQ      BX, R9
	BROADCAST(0x22, Y14) // '"'
	BROADCAST(0x5C, Y15) // '\\'
	BROADCAST(0x1F, Y7)

endloop:
	VMOVDQU   (SI), Y1
	VPCMPEQB  Y14, Y1, Y3
	VPCMPEQB  Y15, Y1, Y4
	VPOR      Y3, Y4, Y3
	VPMINUB   Y7, Y1, Y4
	VPCMPEQB  Y4, Y1, Y4
	VPOR      Y4, Y3, Y3
	VPMOVMSKB Y3, AX
	TESTL     AX, AX
	JNZ       strfound
	ADDQ      $32, SI
	DECQ      CX
	JNZ       endloop

strdone:
	VZEROUPPER

strnone:
	MOVQ $-1, end+24(FP)
	MOVQ R9, plain+32(FP)
	RET

strfound:
	VZEROUPPER
	BSFL AX, AX
	SUBQ DI, SI
	ADDQ SI, AX
	MOVQ AX, end+24(FP)
	CMPQ R9, AX
	JLE  strret
	MOVQ AX, R9 // not reached: an end byte is outside the alphabet

strret:
	MOVQ R9, plain+32(FP)
	RET

// func alphabetAVX2(b []byte) bool
TEXT ·alphabetAVX2(SB), NOSPLIT, $0-25
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	SHRQ $5, CX
	JZ   alphaok
	ALPHABET_CONSTANTS

alphaloop:
	VMOVDQU   (SI), Y1
	ALPHABET(Y1, Y3)
	VPTEST    Y3, Y3
	JNZ       alphabad
	ADDQ      $32, SI
	DECQ      CX
	JNZ       alphaloop
	VZEROUPPER

alphaok:
	MOVB $1, ret+24(FP)
	RET

alphabad:
	VZEROUPPER
	MOVB $0, ret+24(FP)
	RET
