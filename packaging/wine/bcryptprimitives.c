/* The test prefix's bcryptprimitives.dll: Wine 8 (Debian 12's) lacks this Windows 10 DLL,
 * whose ProcessPrng Rust's standard library and Go's runtime call for random bytes. This
 * forwards it to RtlGenRandom (advapi32's SystemFunction036), which Wine has. Test only: it is
 * installed into the Wine prefix `make test` uses, never shipped. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!SystemFunction036(data, n))
            return FALSE;
        data += n;
        len -= n;
    }
    return TRUE;
}
