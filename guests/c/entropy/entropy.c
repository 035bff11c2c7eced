/* entropy: prints everything that usually differs between runs (wall clock,
 * monotonic clock, random bytes, directory order), for checking --deterministic. */
#include <dirent.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    struct timespec wall, mono1, mono2;
    clock_gettime(CLOCK_REALTIME, &wall);
    clock_gettime(CLOCK_MONOTONIC, &mono1);
    clock_gettime(CLOCK_MONOTONIC, &mono2);
    printf("wall %lld.%09ld\n", (long long)wall.tv_sec, wall.tv_nsec);
    printf("monotonic step %lld ns\n",
           (long long)(mono2.tv_sec - mono1.tv_sec) * 1000000000LL + (mono2.tv_nsec - mono1.tv_nsec));
    unsigned char bytes[16];
    if (getentropy(bytes, sizeof bytes) == 0) {
        printf("random ");
        for (size_t i = 0; i < sizeof bytes; i++) printf("%02x", bytes[i]);
        printf("\n");
    }
    for (int i = 1; i < argc; i++) {
        DIR *d = opendir(argv[i]);
        for (struct dirent *e; d && (e = readdir(d));) printf("entry %s\n", e->d_name);
        if (d) closedir(d);
    }
    return 0;
}
