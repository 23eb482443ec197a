/*
 * Every operator new/delete variant 10 times, each with its own size, so
 * that a duplicate (operator new counted again as its inner malloc) shows:
 *   new(1001)/delete, new[](1002)/delete[], new(1003, nothrow)/delete(nothrow),
 *   new[](1004, nothrow)/delete[](nothrow), new(1005, align 64)/delete(align),
 *   new[](1006, align 64)/delete[](align), new(1007)/delete(p, 1007) sized,
 *   new[](1008)/delete[](p, 1008) sized, new(1009, align 64)/delete(p, 1009, align)
 * = 60 Malloc (sizes 1001-1004, 1007, 1008) + 30 AlignedAlloc (1005, 1006, 1009),
 *   90 Free from these.  libstdc++ itself may allocate at start-up.
 */
#include <new>

int main()
{
	const std::align_val_t a{64};

	for (int i = 0; i < 10; i++) {
		void *volatile p;

		p = ::operator new(1001);
		::operator delete(p);
		p = ::operator new[](1002);
		::operator delete[](p);
		p = ::operator new(1003, std::nothrow);
		::operator delete(p, std::nothrow);
		p = ::operator new[](1004, std::nothrow);
		::operator delete[](p, std::nothrow);
		p = ::operator new(1005, a);
		::operator delete(p, a);
		p = ::operator new[](1006, a);
		::operator delete[](p, a);
		p = ::operator new(1007);
		::operator delete(p, 1007);
		p = ::operator new[](1008);
		::operator delete[](p, 1008);
		p = ::operator new(1009, a);
		::operator delete(p, 1009, a);
	}
	return 0;
}
