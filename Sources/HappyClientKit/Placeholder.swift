// module
