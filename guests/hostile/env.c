/* Hostile: prints every environment variable it can see, hoping for the host's. */
#include <stdio.h>

extern char **environ;

int main(void) {
    for (char **e = environ; *e; e++) printf("%s\n", *e);
    return 0;
}
