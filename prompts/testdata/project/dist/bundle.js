console.log("built")
