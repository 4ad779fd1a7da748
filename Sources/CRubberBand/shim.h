#include <rubberband/rubberband-c.h>
