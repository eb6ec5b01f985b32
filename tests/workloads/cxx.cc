// SPDX-License-Identifier: MIT
/*
 * cxx: C++ names that must come out exactly, and apart -- a namespace, a
 * class template at two types, two overloads, a member function:
 *
 *   work <- shapes::twice(int) <- shapes::Box<int>::open(int) <- main
 *   work <- shapes::twice(double) <- shapes::Box<double>::open(double) <- main
 *   work <- shapes::twice(int) <- shapes::Box<int>::open(int)
 *        <- shapes::Widget::poke(char const*) <- main
 *
 * and allocates through libstdc++'s operator new, whose first instruction
 * is endbr64 in Debian's build, on two paths that differ only in its
 * caller:
 *
 *   operator new(unsigned long) <- shapes::fresh(int) <- main      once
 *   operator new(unsigned long) <- shapes::fresh(double) <- main   twice
 *
 * cxx long: only two names longer than 1023 characters that differ only
 * at their ends, each once:
 *
 *   work <- shapes::Long<shapes::LONG_ID>::open(shapes::LONG_ID) <- main
 *   work <- shapes::Long<shapes::LONG_ID>::open(shapes::LONG_ID, int) <- main
 *
 * with LONG_ID 546 characters long: 1130 and 1135 in all.
 */
#define NOINLINE __attribute__((noinline))

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define D2(x) CAT(x, x)
#define D4(x) D2(D2(x))
#define D16(x) D4(D4(x))
#define D32(x) D2(D16(x))
#define D512(x) D32(D16(x))
/* n x 544, then ok */
#define LONG_ID CAT(CAT(D512(n), D32(n)), ok)

extern "C" NOINLINE void work(void)
{
	asm volatile("" ::: "memory");
}

namespace shapes {

NOINLINE void twice(int)
{
	work();
}

NOINLINE void twice(double)
{
	work();
}

NOINLINE int *fresh(int v)
{
	return new int(v);
}

NOINLINE double *fresh(double v)
{
	return new double(v);
}

template <typename T> struct Box {
	NOINLINE void open(T v)
	{
		twice(v);
	}
};

class Widget {
public:
	NOINLINE void poke(const char *)
	{
		Box<int>().open(1);
	}
};

struct LONG_ID {};

template <typename T> struct Long {
	NOINLINE void open(T)
	{
		work();
	}
	NOINLINE void open(T, int)
	{
		work();
	}
};

} // namespace shapes

int main(int argc, char **)
{
	if (argc > 1) {
		shapes::Long<shapes::LONG_ID>().open(shapes::LONG_ID());
		shapes::Long<shapes::LONG_ID>().open(shapes::LONG_ID(), 1);
		return 0;
	}
	shapes::Box<int>().open(1);
	shapes::Box<double>().open(2.0);
	shapes::Widget().poke("x");
	delete shapes::fresh(1);
	delete shapes::fresh(2.0);
	delete shapes::fresh(3.0);
	return 0;
}
