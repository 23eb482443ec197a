// Containers, strings and a stream: what a small C++ program allocates with.
#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

int main()
{
	std::map<std::string, std::vector<int>> groups;
	for (int i = 0; i < 20000; i++) {
		std::ostringstream key;
		key << "group-" << (i * 7919) % 37;
		groups[key.str()].push_back(i);
	}
	std::vector<std::unique_ptr<std::string>> names;
	for (const auto &g : groups)
		names.push_back(std::make_unique<std::string>(g.first + ":" + std::to_string(g.second.size())));
	std::sort(names.begin(), names.end(), [](const auto &a, const auto &b) { return *a > *b; });
	for (size_t i = 0; i < 5; i++)
		std::cout << *names[i] << '\n';
	std::cout << groups.size() << " groups\n";
	return 0;
}
