/* A stand-in for Windows' bcryptprimitives.dll, for the `windows` step of .ci/run only.
 *
 * Why it exists: Rust's std on Windows (1.78 and later) draws its random numbers (the
 * seeds of HashMap's hasher) from ProcessPrng in bcryptprimitives.dll, which every
 * Windows since 10 ships. Wine 8.0, Debian 12's, has no such DLL, so a Windows build
 * of the book stops at its first HashMap under Wine. This DLL exports ProcessPrng and
 * forwards it to SystemFunction036 (RtlGenRandom, in advapi32), which Wine has. It is
 * copied beside the .exe files under Wine and never shipped, and never used on Windows.
 *
 * Built by .ci/run: x86_64-w64-mingw32-gcc -shared -O2 -o bcryptprimitives.dll <this>
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    /* RtlGenRandom takes a ULONG length: larger requests go in pieces. */
    while (length > 0) {
        ULONG piece = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, piece))
            return FALSE;
        data += piece;
        length -= piece;
    }
    return TRUE;
}
