/* Hostile: writes to stdout without end. */
#include <stdio.h>

int main(void) {
    static const char line[] = "flood flood flood flood flood flood flood flood flood flood flood flood\n";
    for (;;) fputs(line, stdout);
}
