# CMake toolchain file for Arm Cortex-M bare-metal firmware (arm-none-eabi GCC).
#
#   cmake -S . -B build -DCMAKE_TOOLCHAIN_FILE=<mcuflow>/firmware/cmake/arm-none-eabi.cmake
#
# It selects the cross compilers and the size-oriented defaults every mcuflow
# firmware uses (function/data sections + --gc-sections; no exceptions and no
# RTTI in C++). It sets NO CPU: the -mcpu/-mfpu/-mfloat-abi flags come from the
# board (firmware/boards/<board>/board.cmake, or mcuflow_add_firmware() in
# firmware/cmake/mcuflow_firmware.cmake), because they differ per board and
# must be identical for compiling and linking.
#
# Options (cache variables):
#   ARM_NONE_EABI_PREFIX   tool name prefix (default "arm-none-eabi-")
#   ARM_NONE_EABI_ROOT     directory containing the tools (default: PATH)

set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_CROSSCOMPILING ON)

set(ARM_NONE_EABI_PREFIX "arm-none-eabi-" CACHE STRING "Cross tool name prefix")
set(ARM_NONE_EABI_ROOT "" CACHE PATH "Directory holding the cross tools (empty: search PATH)")

if(ARM_NONE_EABI_ROOT)
  set(_mcuflow_hints HINTS "${ARM_NONE_EABI_ROOT}" NO_DEFAULT_PATH)
else()
  set(_mcuflow_hints "")
endif()
find_program(_MCUFLOW_ARM_GCC ${ARM_NONE_EABI_PREFIX}gcc ${_mcuflow_hints})
find_program(_MCUFLOW_ARM_GXX ${ARM_NONE_EABI_PREFIX}g++ ${_mcuflow_hints})
if(NOT _MCUFLOW_ARM_GCC OR NOT _MCUFLOW_ARM_GXX)
  message(FATAL_ERROR
    "${ARM_NONE_EABI_PREFIX}gcc/g++ not found. Install gcc-arm-none-eabi "
    "libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib, or set ARM_NONE_EABI_ROOT.")
endif()
get_filename_component(_mcuflow_bin "${_MCUFLOW_ARM_GCC}" DIRECTORY)

set(CMAKE_C_COMPILER "${_MCUFLOW_ARM_GCC}")
set(CMAKE_CXX_COMPILER "${_MCUFLOW_ARM_GXX}")
set(CMAKE_ASM_COMPILER "${_MCUFLOW_ARM_GCC}")
set(CMAKE_OBJCOPY "${_mcuflow_bin}/${ARM_NONE_EABI_PREFIX}objcopy" CACHE FILEPATH "objcopy")
set(CMAKE_OBJDUMP "${_mcuflow_bin}/${ARM_NONE_EABI_PREFIX}objdump" CACHE FILEPATH "objdump")
set(CMAKE_SIZE "${_mcuflow_bin}/${ARM_NONE_EABI_PREFIX}size" CACHE FILEPATH "size")
set(CMAKE_AR "${_mcuflow_bin}/${ARM_NONE_EABI_PREFIX}ar" CACHE FILEPATH "ar")
set(CMAKE_RANLIB "${_mcuflow_bin}/${ARM_NONE_EABI_PREFIX}ranlib" CACHE FILEPATH "ranlib")

# No startup code or linker script yet at configure time: test the compilers
# by building a static library instead of linking an executable.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(CMAKE_C_FLAGS_INIT "-ffunction-sections -fdata-sections")
set(CMAKE_CXX_FLAGS_INIT
    "-ffunction-sections -fdata-sections -fno-exceptions -fno-rtti -fno-threadsafe-statics -fno-use-cxa-atexit")
set(CMAKE_ASM_FLAGS_INIT "-x assembler-with-cpp")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,--gc-sections")

set(CMAKE_EXECUTABLE_SUFFIX_C ".elf")
set(CMAKE_EXECUTABLE_SUFFIX_CXX ".elf")
set(CMAKE_EXECUTABLE_SUFFIX_ASM ".elf")

# Never pick up host libraries or headers.
set(CMAKE_FIND_ROOT_PATH "${_mcuflow_bin}/..")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
