#!/usr/bin/env python3
"""Self-test of tools/check_wgmma_regs.py on small hand-written SASS listings: each case must
give the verdict it names (races found or not), so the SASS check in tests/check_sm90_sass.sh
can fail. Needs nothing but python3."""
import os
import subprocess
import sys
import tempfile

TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools", "check_wgmma_regs.py")


def listing(lines):
    """SASS text in cuobjdump's form: one function, an address per instruction."""
    out = ["        Function : k"]
    for i, ins in enumerate(lines):
        out.append(f"        /*{16 * i:04x}*/                   {ins} ;   /* 0x0 */")
    return "\n".join(out) + "\n"


G1 = ["WARPGROUP.ARRIVE", "HGMMA.64x16x16.F32.BF16 R24, R48, gdesc[UR4], R24, gsb0"]  # group 1: A R48..R51
G2 = ["WARPGROUP.ARRIVE", "HGMMA.64x16x16.F32.BF16 R24, R52, gdesc[UR4], R24, gsb0"]  # group 2: A R52..R55
CASES = [
    # (name, listing, races expected)
    ("write after wait 0", G1 + ["WARPGROUP.DEPBAR.LE gsb0, 0x0", "MOV R48, R1", "EXIT"], False),
    ("write before any wait", G1 + ["MOV R49, R1", "WARPGROUP.DEPBAR.LE gsb0, 0x0", "EXIT"], True),
    ("accumulator read while pending", G1 + ["FADD R2, R30, R1", "WARPGROUP.DEPBAR.LE gsb0, 0x0", "EXIT"], True),
    # two groups, wait 1: the older (R48) is retired, the newer (R52) is not
    ("older group's A after wait 1", G1 + G2 + ["WARPGROUP.DEPBAR.LE gsb0, 0x1", "MOV R48, R1",
                                                 "WARPGROUP.DEPBAR.LE gsb0, 0x0", "EXIT"], False),
    ("newer group's A after wait 1", G1 + G2 + ["WARPGROUP.DEPBAR.LE gsb0, 0x1", "MOV R53, R1",
                                                 "WARPGROUP.DEPBAR.LE gsb0, 0x0", "EXIT"], True),
    # one group, wait 1 retires nothing: its A registers stay pending
    ("wait 1 with one group", G1 + ["WARPGROUP.DEPBAR.LE gsb0, 0x1", "MOV R48, R1", "EXIT"], True),
    # HGMMAs without gsb0 join the next group: a wait 1 after two commits keeps both of the last one
    ("open group joins the next commit", ["WARPGROUP.ARRIVE", "HGMMA.64x16x16.F32.BF16 R24, R48, gdesc[UR4], R24",
                                          "HGMMA.64x16x16.F32.BF16 R24, R52, gdesc[UR4], R24, gsb0"] + G2[1:]
     + ["WARPGROUP.DEPBAR.LE gsb0, 0x1", "MOV R48, R1", "WARPGROUP.DEPBAR.LE gsb0, 0x0", "EXIT"], False),
    # a loop whose back edge brings a pending group to the write at its top
    ("loop back edge", ["MOV R0, R1", "MOV R48, R2"] + G1
     + ["ISETP.NE.AND P0, PT, R0, RZ, PT", "@P0 BRA 0x10", "WARPGROUP.DEPBAR.LE gsb0, 0x0", "EXIT"], True),
    ("loop with a wait before the write", ["MOV R0, R1", "WARPGROUP.DEPBAR.LE gsb0, 0x0", "MOV R48, R2"] + G1
     + ["ISETP.NE.AND P0, PT, R0, RZ, PT", "@P0 BRA 0x10", "WARPGROUP.DEPBAR.LE gsb0, 0x0", "EXIT"], False),
]


def main():
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        for name, lines, want in CASES:
            path = os.path.join(d, "k.sass")
            with open(path, "w") as f:
                f.write(listing(lines))
            r = subprocess.run([sys.executable, TOOL, path], capture_output=True, text=True)
            got = r.returncode == 1
            if r.returncode not in (0, 1) or got != want:
                bad += 1
                print(f"FAIL check_wgmma_regs {name}: expected {'races' if want else 'none'}, exit {r.returncode}: "
                      f"{r.stdout.strip()[:300]}")
            else:
                print(f"PASS check_wgmma_regs {name}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
